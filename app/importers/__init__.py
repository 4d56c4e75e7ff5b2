"""Chat history from other apps (ChatGPT, Claude, Open WebUI, LibreChat, LM Studio, Jan,
SillyTavern, text-generation-webui, Chatbox, Branchwise's own exports) brought into the store
with every branch intact.

Each format's reader (one module per format family) turns its files into `ImportedConversation`
values (`tree.py`) without touching the store, following the shared rules of `forest.py`;
`sources.py` and `streams.py` make hostile files harmless, `detect.py` picks readers by shape,
`writer.py` writes one conversation per transaction (idempotent by source id, undoable by batch),
`run.py` runs an import and `preview.py` a preview (both report in frozen dataclasses), `cli.py`
and `archive.py` are `branchwise import/export`. The window runs them as operations
(`app.operations.chat_history`).

May import: `ijson`, `app.store` (conversations, records, export formats, the database file),
`app.images` (the images an export carries), `app.knowledge.excerpts` (the knowledge
excerpts a message of an export keeps), `app.paths`, and `_typeshed` for the type checker
only (`SupportsRead`: a stub module, never loaded).

Never Qt, `ui` or `inference`.
"""
