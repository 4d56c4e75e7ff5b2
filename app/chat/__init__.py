"""The chat controller and what it composes: a person's intents (new chat, send, edit,
regenerate, switch branch, delete, fork) turned into store changes and worker requests
(`conversation_actions`, `message_actions`), the composer's token counts (`prompt_counts`) and
the branch map's outline.

May import: `PySide6.QtCore` and every other `app` subpackage (`app.generation`, `app.images`,
`app.library`, `app.mcp`, `app.remote`, `app.replay`, `app.server`, `app.store`, `app.settings`).

Never `ui`, never MLX.
"""
