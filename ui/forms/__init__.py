"""Form rows shared by dialogs: sampling fields, context length, overflow policy, model and draft
model choices, knowledge per message; and a settings dialog's layout (`form_dialog`).

May import: `PySide6`, `ui.text`, `ui.widgets` and `app` values.
"""
