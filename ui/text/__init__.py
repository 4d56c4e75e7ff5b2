"""Untrusted text shown safely: Markdown to a safe HTML subset (also while it streams), the
hardened text browser, literal plain text, and search snippets.

May import: `PySide6`, `markdown_it`, `pygments` and `ui.widgets`.

No other `ui` subpackage.
"""
