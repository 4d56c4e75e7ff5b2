"""Talking to the model: the inference worker thread (the only thread that touches MLX) and its
parts (requests, engine calls, coalesced tokens, errors, the models it holds, what its signals
carry), the model session, replies (and what they tell the window), Regenerate xN and Compare
written into the store as they stream (with how a compare's models share memory), what a prompt
is made of (attached files, knowledge excerpts, think settings), and a turn's retrieval from the
knowledge index (`knowledge_retrieval`, `knowledge_index`).

May import: `PySide6.QtCore`, `app.store`, `app.images`, `app.library`, `app.settings`, `app.sizes`,
`app.knowledge` (the excerpts a user turn keeps and what a retrieval returns; the index itself
only lazily, in `knowledge_index`, once its file exists),
`app.qt_signal` (the type of a signal in a protocol), `app.gui_relay`, `psutil` (the memory free
for models), `pypdf` (text out of attached PDFs), inference's error classes at import time
(`inference.errors`, `inference.importing.model_folder`, and `inference.engine.cache_state` for
the type of a branch's cache state: no MLX), and `inference` and `mlx.core`
lazily on the worker thread only (the one MLX call is the thread's stream teardown).

Never `app.chat` (which drives it) or `ui`.
"""
