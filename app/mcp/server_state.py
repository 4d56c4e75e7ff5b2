"""What a server connection reports to whoever shows it: its status, its tools when ready, and
why it failed with the last lines it wrote. Light (no SDK), so the window can import it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from app.mcp.tool_info import ToolInfo


class ServerStatus(StrEnum):
    STOPPED = "stopped"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"


@dataclass(frozen=True)
class ServerState:
    name: str
    status: ServerStatus
    tools: tuple[ToolInfo, ...] = ()
    error: str | None = None
    stderr_tail: tuple[str, ...] = ()  # the server's last lines on stderr when it failed


StateListener = Callable[[ServerState], None]
