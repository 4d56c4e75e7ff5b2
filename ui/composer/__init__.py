"""The composer under the chat: the message box, its attachments and Think controls, the
token meter, the model picker and the per-chat unsent drafts.

May import `ui.text`, `ui.widgets`, `ui.forms`, `ui.chat` (attachment chips), `app` and
PySide6; never `ui.window`.
"""
