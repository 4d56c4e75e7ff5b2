"""Shared building blocks: the theme (palettes and style sheet), icons, icon buttons and
self-sizing editors.

May import: `PySide6` and `resources` only.
"""
