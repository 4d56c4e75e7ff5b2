"""How the window names a tool: by its own name and its server's (`add on fx`), never by the
namespaced name the model calls it (`fx__add`), which is only what the model sees. Names come
from config files, servers and models: the callers show them as plain text."""

from __future__ import annotations

from app.mcp.config import BUILTIN_SERVER


def server_text(server: str) -> str:
    return "Branchwise (built in)" if server == BUILTIN_SERVER else server


def tool_text(name: str, server: str) -> str:
    """E.g. "add on fx", "search_conversations (built in)" (`name` may carry the call's
    arguments); the name alone where no server is known (a call to no tool of the chat)."""
    if not server:
        return name
    return f"{name} (built in)" if server == BUILTIN_SERVER else f"{name} on {server}"
