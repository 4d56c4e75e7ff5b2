"""The window's dialogs: About, Preferences, a chat's settings, the model library, downloads,
connections and delete confirmations.

May import `ui.forms`, `ui.text`, `ui.widgets`, `app` and PySide6; never `ui.window`.
"""
