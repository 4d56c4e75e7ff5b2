"""Which tools a chat offers its model: the servers the chat allows (its own choice, kept in its
params, else the default from Preferences), and only tools that are ready now, in a stable order
so the prompt that lists them never changes by itself. The built-in knowledge tools go only to a
chat that reads knowledge.

Whether the model can take tools at all is the worker's to say (it reads the chat template):
it reports the tool-call format with the model's info, as plain text, or None.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from app.chat.knowledge.choice import chat_collections
from app.chat.knowledge.tools import TOOL_NAMES as KNOWLEDGE_TOOL_NAMES
from app.mcp.config import BUILTIN_SERVER
from app.mcp.tool_info import ToolInfo

if TYPE_CHECKING:
    from app.generation.worker_events import ModelLoaded

# In a conversation's params: the names of the servers it may use (the built-in tools count as
# the server "branchwise"). Absent: the default from Preferences.
CHAT_KEY = "tool_servers"


def chat_servers(params: dict[str, Any], default: Iterable[str] | None) -> set[str] | None:
    """The servers a chat may use; None: every server (the default when nothing was chosen)."""
    chosen = params.get(CHAT_KEY)
    if isinstance(chosen, list) and all(isinstance(name, str) for name in chosen):
        return set(chosen)
    return None if default is None else set(default)


def chat_tools(
    available: Iterable[ToolInfo], params: dict[str, Any], default: Iterable[str] | None
) -> list[ToolInfo]:
    allowed = chat_servers(params, default)
    reads = bool(chat_collections(params))
    return [
        t
        for t in available
        if (allowed is None or t.server in allowed)
        and (reads or t.server != BUILTIN_SERVER or t.name not in KNOWLEDGE_TOOL_NAMES)
    ]


def tools_off_reason(model_info: ModelLoaded | None, remote: bool = False) -> str | None:
    """Why no tools can be offered now (no model, or one whose template takes none), or None.
    A chat with a remote model is always offered them: its server reads the calls, and they
    run here as a local model's do."""
    if remote:
        return None
    if model_info is None:
        return "No model is loaded."
    if model_info.tool_format is None:
        name = model_info.model_id or "This model"
        return f"{name}'s chat template takes no tools, so tools are off for this model."
    return None


def server_label(server: str) -> str:
    return "Built in" if server == BUILTIN_SERVER else server
