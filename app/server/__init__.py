"""The local OpenAI-compatible server (aiohttp): its settings and guards, the request and response
schema, served requests on the shared worker, hosting it from the window, and `branchwise serve`.

May import `app.generation`, `app.store`, `app.library`, `app.paths`, `app.settings`, QtCore;
never `ui`, never MLX at import time.
"""
