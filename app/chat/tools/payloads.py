"""What the window's tool card is told about the tool loop (`app.chat.tools.flow`): frozen
dataclasses of plain values, so the card never reads the flow's state."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from app.mcp.tool_info import ToolInfo


class ToolWait(StrEnum):
    """What a chat's tool turn waits for. A StrEnum: the card's style sheet reads its value."""

    APPROVAL = "approval"  # the person's Run or Deny
    RUNNING = "running"  # the call to end
    LIMIT = "limit"  # the person's Continue past the reply's call limit


@dataclass(frozen=True, slots=True)
class ToolCallCard:
    """A call asked about (`waiting` APPROVAL) or running (RUNNING): where it is, the tool
    (its server, its name as the person knows it and as the model calls it, its description)
    and its arguments; `changed_from`, the description the person approved before it changed
    (or None); `repeated`, whether it repeats a call already answered since the person's last
    message."""

    conversation_id: int
    reply_id: int
    call_id: str | None
    server: str
    tool: str
    model_name: str
    arguments: dict[str, Any]
    description: str
    changed_from: str | None
    repeated: bool
    waiting: ToolWait


@dataclass(frozen=True, slots=True)
class CallLimit:
    """The reply of `conversation_id` made `count` calls, reaching the `limit` one reply may
    make before the person lets it go on."""

    conversation_id: int
    count: int
    limit: int


@dataclass(frozen=True, slots=True)
class CallSettled:
    """The card for `conversation_id`'s call `call_id` is done with (None: whatever it showed)."""

    conversation_id: int
    call_id: str | None


def call_card(
    conversation_id: int,
    reply_id: int,
    call: dict[str, Any],
    tool: ToolInfo | None,
    changed_from: str | None,
    repeated: bool,
    waiting: ToolWait,
) -> ToolCallCard:
    """The card of `call` (a stored call: {"id", "name", "arguments"}) for the chat's `tool`
    of that name (None: the chat has none)."""
    return ToolCallCard(
        conversation_id,
        reply_id,
        call.get("id"),
        tool.server if tool else "",
        tool.name if tool else call.get("name", ""),
        call.get("name", ""),
        call.get("arguments", {}),
        tool.description if tool else "",
        changed_from,
        repeated,
        waiting,
    )
