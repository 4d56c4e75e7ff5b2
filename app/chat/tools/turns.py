"""Where a chat stands in a tool loop, read from the tree alone: the reply whose calls are being
answered, which of its calls have results on a branch, how many calls the current reply has
made since the person last wrote (the limit counts them), and whether a call repeats one
already answered since then (a model going round in circles), and which tool each answered call
ran, as its result records it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.mcp.tool_info import ToolLabel
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


def later_results(
    shown: list[Message], through: list[Message], message: Message
) -> dict[str, Message]:
    """The results of the calls after `message`'s (a tool result) on the branch `shown`, or on
    `through` (the path down to `message`) when it is not there, by call id: a new branch from
    `message` copies them, never runs them again."""
    path = shown if message.id in {m.id for m in shown} else through
    reply = calling_reply(through)
    if reply is None:
        return {}
    results = answered(path, reply)
    ids = [c["id"] for c in reply.tool_calls]
    if message.tool_call_id not in ids:
        return {}
    later = ids[ids.index(message.tool_call_id) + 1 :]
    return {i: results[i] for i in later if i in results}


@dataclass(frozen=True, slots=True)
class LoopStart:
    """Where the tool loop starts answering `calls` of the reply `reply_id`: below `leaf_id`
    (`before` is the path down to it)."""

    before: list[Message]
    reply_id: int
    leaf_id: int
    calls: list[dict[str, Any]]
    # Calls that run without asking: a re-run call (the person chose to run it again).
    approved: set[str] = field(default_factory=set[str])


def restart_from_result(path: list[Message], rerun: bool) -> LoopStart | None:
    """The loop's restart from the result at the end of `path`: its own call again (`rerun`:
    the new result is its sibling) or the calls after it (an edited result stays); None when
    it answers no call of its reply."""
    result = path[-1]
    reply = calling_reply(path)
    ids = [c["id"] for c in reply.tool_calls] if reply is not None else []
    if reply is None or result.parent_id is None or result.tool_call_id not in ids:
        return None
    index = ids.index(result.tool_call_id)
    calls = list(reply.tool_calls)
    if rerun:
        return LoopStart(path[:-1], reply.id, result.parent_id, calls[index:], {ids[index]})
    return LoopStart(path, reply.id, result.id, calls[index + 1 :])


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


def repeats_answered_call(path: list[Message], call: dict[str, Any]) -> bool:
    """Whether a reply on `path` since the person's last message already made this very call
    (the same tool, the same arguments) and got its result."""
    results: set[str] = set()
    for message in reversed(path):  # a call's result comes after it: seen first
        if message.role == "user":
            return False
        if message.role == "tool" and message.tool_call_id is not None:
            results.add(message.tool_call_id)
        for earlier in message.tool_calls:
            if (
                earlier["id"] != call["id"]
                and earlier["id"] in results
                and earlier["name"] == call["name"]
                and earlier["arguments"] == call["arguments"]
            ):
                return True
    return False


def result_labels(path: list[Message]) -> dict[str, ToolLabel]:
    """The tool each call answered on `path` ran (its result's record of server and tool), by
    call id: it names the tool even once its server is gone."""
    labels: dict[str, ToolLabel] = {}
    for message in path:
        server, tool = message.stats.get("server"), message.stats.get("tool")
        if message.role == "tool" and message.tool_call_id and server and tool:
            labels.setdefault(message.tool_call_id, ToolLabel(str(server), str(tool)))
    return labels
