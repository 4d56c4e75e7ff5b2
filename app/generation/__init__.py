"""Talking to the model: the inference worker thread (the only thread that touches MLX), the
model session it holds, replies and Regenerate xN written into the store as they stream, token
counts for the composer, and the relay of callbacks to the GUI thread.

May import QtCore, `app.store`, `app.library`, `app.settings`, `app.sizes`, and `inference`
lazily on the worker thread only. Never `app.chat` (which drives it) or `ui`.
"""
