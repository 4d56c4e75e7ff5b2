"""Where a chat stands in a tool loop, read from the tree alone: the reply whose calls are being
answered, which of its calls have results on a branch, and how many calls the current reply has
made since the person last wrote (the limit counts them)."""

from __future__ import annotations

from typing import Any

from app.store.records import Message


def calling_reply(path: list[Message]) -> Message | None:
    """The reply at the end of `path` (past any tool results below it) when it made calls."""
    for message in reversed(path):
        if message.role == "tool":
            continue
        return message if message.role == "assistant" and message.tool_calls else None
    return None


def answered(path: list[Message], reply: Message) -> dict[str, Message]:
    """The tool results below `reply` on `path`, by the id of the call each answers."""
    ids = [m.id for m in path]
    if reply.id not in ids:
        return {}
    results: dict[str, Message] = {}
    for message in path[ids.index(reply.id) + 1 :]:
        if message.role != "tool":
            break
        if message.tool_call_id is not None:
            results.setdefault(message.tool_call_id, message)
    return results


def unanswered(path: list[Message]) -> list[dict[str, Any]]:
    """The calls of the reply at the end of `path` that have no result on it yet, in order."""
    reply = calling_reply(path)
    if reply is None:
        return []
    done = answered(path, reply)
    return [call for call in reply.tool_calls if call["id"] not in done]


def calls_since_person(path: list[Message]) -> int:
    """Tool results on `path` since the person's last message: the calls made by the reply
    being written, across its rounds of calls."""
    count = 0
    for message in reversed(path):
        if message.role == "user":
            break
        count += message.role == "tool"
    return count
