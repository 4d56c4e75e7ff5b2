"""Chat history from other apps (ChatGPT, Claude, Open WebUI, LibreChat, LM Studio, Jan,
SillyTavern, text-generation-webui, Chatbox, Branchwise's own exports) brought into the store
with every branch intact.

Each format's reader turns its files into `ImportedConversation` values (`tree.py`) without
touching the store; detection, limits on hostile files and the writing of a conversation into the
store (one transaction each, idempotent by source id) live beside them. May import the standard
library, ijson, and `app.store` (for writing); never Qt widgets, `ui` or `inference`.
"""
