"""Form rows shared by dialogs: sampling fields, context length, overflow policy, model and draft
model choices.

May import: `PySide6`, `ui.text`, `ui.widgets` and `app` values.
"""
