"""What the window's tool card is told about a call: plain values, so the card never reads the
flow's state."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from app.mcp.tool_info import ToolInfo


class ToolWait(StrEnum):
    """What a chat's tool turn waits for. A StrEnum: the card's style sheet reads its value."""

    APPROVAL = "approval"  # the person's Run or Deny
    RUNNING = "running"  # the call to end
    LIMIT = "limit"  # the person's Continue past the reply's call limit


def call_payload(
    conversation_id: int,
    reply_id: int,
    call: dict[str, Any],
    tool: ToolInfo | None,
    changed_from: str | None,
    repeated: bool,
) -> dict[str, Any]:
    """A call asked about or running: where it is, the tool (its server, name as the model
    calls it, description), its arguments; `changed_from`, the description the person approved
    before it changed (or None); `repeated`, whether it repeats a call already answered since
    the person's last message."""
    return {
        "conversation_id": conversation_id,
        "reply_id": reply_id,
        "call_id": call.get("id"),
        "server": tool.server if tool else "",
        "tool": tool.name if tool else call.get("name", ""),
        "model_name": call.get("name", ""),
        "arguments": call.get("arguments", {}),
        "description": tool.description if tool else "",
        "changed_from": changed_from,
        "repeated": repeated,
    }
