"""Tool use read from an export, checked as the store checks its own (`app.store.records`) but
never at the cost of a conversation: a call that the store would refuse (no id or name,
arguments that are not a JSON object, an id used twice), a call list that is not a list, a call
id or tool name that is not text, is left out with a warning and the rest imports. A tool
result that answers no call of the reply above it is kept as written, with a warning.

Only Branchwise's own exports carry tool calls as calls; other apps' tool use is a reply's
trace (their calls name tools this app does not have)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from app.importers.tree import ImportedMessage
from app.store.records import InvalidInputError, check_tool_call


def calls(value: object, label: str, warnings: list[str]) -> list[dict[str, Any]]:
    """The well-formed calls of `value` (a reply's `tool_calls`), in order; `label` names the
    message ("Message 7")."""
    if value is None:
        return []
    if not isinstance(value, list):
        _left_out(warnings, f"{label}: its tool calls are not a list ({_kind(value)})")
        return []
    kept: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, entry in enumerate(cast("Sequence[object]", value), start=1):
        what = f"{label}: tool call {index}"
        try:
            call = check_tool_call(entry, what)
        except InvalidInputError as exc:
            _left_out(warnings, str(exc).removesuffix("."))
            continue
        if call["id"] in seen:
            _left_out(warnings, f"{what} has the id {call['id']!r} of an earlier call")
            continue
        seen.add(call["id"])
        kept.append(call)
    return kept


def text(value: object, label: str, warnings: list[str]) -> str | None:
    """A tool result's call id or tool name (`label`: "Message 7: its tool_call_id"): text, or
    None when missing or of another type (with a warning)."""
    if value is None or isinstance(value, str):
        return value
    _left_out(warnings, f"{label} is not text ({_kind(value)})")
    return None


def check_answers(messages: Sequence[ImportedMessage], warnings: list[str]) -> None:
    """Warn of each tool result whose call id names no call of the reply it answers (the
    nearest message above it that is not a tool result, as `Store.add_tool_result` finds it);
    `messages` come parents first."""
    by_id = {m.source_id: m for m in messages}
    for message in messages:
        if message.role != "tool" or message.tool_call_id is None:
            continue
        reply = by_id.get(message.parent_id) if message.parent_id is not None else None
        while reply is not None and reply.role == "tool":
            reply = by_id.get(reply.parent_id) if reply.parent_id is not None else None
        made = () if reply is None or reply.role != "assistant" else reply.tool_calls
        if not any(call["id"] == message.tool_call_id for call in made):
            warnings.append(
                f"Message {message.source_id} answers tool call {message.tool_call_id!r}, which"
                " the reply above it does not make; it was kept as it is."
            )


def _left_out(warnings: list[str], reason: str) -> None:
    warnings.append(f"{reason}; it was left out.")


def _kind(value: object) -> str:
    return f"a {type(value).__name__}"
