"""The chat controller and what it composes: a person's intents (new chat, send, edit,
regenerate, switch branch, delete, fork, compare) turned into store changes and worker requests
(`conversation_actions`, `message_actions`, `compare_actions`: parts that know no controller,
given what they use and saying what changed by signals the controller relays), the composer's
token counts (`prompt_counts`), the branch map's outline, and tool use (`app.chat.tools`).

May import: `PySide6.QtCore` and every other `app` subpackage (`app.compaction`, `app.generation`,
`app.images`, `app.library`, `app.mcp`, `app.remote`, `app.replay`, `app.server`, `app.store`,
`app.settings`),
and `inference.engine.cache_state` for the type of the cache states the branch map is given
(type-only: it holds no MLX, and app.chat never imports MLX).

Never `ui`, never MLX.
"""
