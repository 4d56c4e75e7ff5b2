"""The chat controller and what it composes: a person's intents (new chat, send, edit,
regenerate, switch branch, delete, fork) turned into store changes and worker requests
(`conversation_actions`, `message_actions`), the composer's token counts (`prompt_counts`) and
the branch map's outline.

May import every other `app` subpackage and QtCore; never `ui`, never MLX.
"""
