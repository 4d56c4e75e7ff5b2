"""The window's dialogs: About, Preferences, a chat's settings, the model library, downloads,
connections and delete confirmations.

May import: `PySide6`, `psutil` (the memory Preferences shows), `ui.forms`, `ui.text`, `ui.widgets`
and `app`.

Never `ui.window`.
"""
