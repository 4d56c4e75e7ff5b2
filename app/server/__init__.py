"""The local OpenAI-compatible server (aiohttp): its settings and guards, the request and response
schema, served requests on the shared worker, hosting it from the window, and `branchwise serve`.

May import: `aiohttp`, `PySide6.QtCore`, `app.generation`, `app.store`, `app.images`, `app.library`,
`app.logs`, `app.paths`, `app.settings`, `app.knowledge.excerpts` (what a request's retrieval
found) and `inference.toolcalls` (the standard library only).

Never `ui`, never MLX at import time.
"""
