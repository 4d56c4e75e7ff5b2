"""The conversation sidebar: New chat, search across chats, and the grouped list of
conversations.

May import `ui.text`, `ui.widgets`, `ui.dialogs` (the delete question), `app` values and PySide6;
never `ui.window`.
"""
