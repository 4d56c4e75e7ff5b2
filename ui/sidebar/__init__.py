"""The conversation sidebar: New chat, search across chats, and the grouped list of
conversations.

May import: `PySide6`, `ui.text`, `ui.widgets`, `ui.dialogs` (the delete question) and `app` values.

Never `ui.window`.
"""
