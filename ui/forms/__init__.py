"""Form rows shared by dialogs: sampling fields, context length, overflow policy, model and draft
model choices.

May import `ui.text`, `ui.widgets`, `app` values and PySide6.
"""
