"""The conversation sidebar: New chat, search across chats, and the grouped list of
conversations.

May import `ui.text`, `ui.widgets`, `app` values and PySide6; never `ui.window`.
"""
