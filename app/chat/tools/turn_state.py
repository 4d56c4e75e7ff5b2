"""What the tool loop (`app.chat.tools.flow`) holds for a chat while it answers a reply's
calls, and what a stored result records of its run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.chat.tools.payloads import ToolWait
from app.chat.tools.runs import ToolRun
from app.mcp.results import ToolResult
from app.mcp.tool_info import ToolInfo
from app.store.records import Message


@dataclass
class ToolTurn:
    """One chat's place in the loop: the reply being answered, its calls left, and the one
    asked about or running."""

    conversation_id: int
    reply_id: int  # the reply whose calls are answered
    leaf_id: int  # where the next result goes: the reply, or the last result so far
    remaining: list[dict[str, Any]]
    count: int  # results since the person's last message, on this branch
    limit: int  # results the reply may reach before asking to go on
    user_id: int | None  # the person's last message: a raised limit holds until the next one
    call: dict[str, Any] | None = None  # the call asked about or running
    tool: ToolInfo | None = None
    run: ToolRun | None = None
    started: float = 0.0
    waiting: ToolWait | None = None  # None: nothing (yet), or the card is done with
    ask_always: bool = False  # ask before each call even under "always" (a resumed turn)
    reused: dict[str, Message] = field(default_factory=dict)  # results to copy, by call id
    approved: set[str] = field(default_factory=set)  # calls the person already said to run

    def settle_call(self) -> None:
        """The call asked about is done with: answered, or replaced by an edited reply."""
        self.call = self.tool = None
        self.waiting = None


def result_stats(
    tool: ToolInfo | None, name: str, result: ToolResult, shown: str
) -> dict[str, Any]:
    """A tool message's stats: where it ran, how long, and how much of its text was cut to
    `shown` (the result cap); `name` is the call's own when the chat has no such tool."""
    stats: dict[str, Any] = {
        "server": tool.server if tool else None,
        "tool": tool.name if tool else name,
        "duration_s": round(result.duration_s, 3),
        "chars": len(result.text),
        "cut": len(result.text) - len(shown) if shown != result.text else 0,
    }
    if result.failure is not None:
        stats["failure"] = result.failure.value
    return stats
