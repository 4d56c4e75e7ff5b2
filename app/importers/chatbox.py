"""Chatbox's exported data: a dump of its storage, `{"session:<id>": Session, "chat-sessions-
list": [...], ...}` (older versions: `"chat-sessions": [Session...]`). A session is `{id, name,
messages[] (the branch shown), messageForksHash{<message id>: {position, lists[{id,
messages[]}]}}}`.

The shown branch is `messages`; a fork entry holds, for the message it is keyed by, the other
continuations after it (`lists`, the shown one empty at `position`), which may fork again. A
first `system` message is the system prompt; text, reasoning and tool calls come from
`contentParts` (or the older `content` text). Image bytes are not in the export.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from app.importers import forest
from app.importers import values as v
from app.importers.entries import Entry, RefusedEntry, one
from app.importers.errors import ImportRefusedError
from app.importers.tree import ImportedAttachment, ImportedConversation, ImportedMessage

FORMAT = "chatbox"


def matches(data: dict[str, Any]) -> bool:
    return isinstance(data.get("chat-sessions"), list) or any(
        isinstance(key, str) and key.startswith("session:") for key in data
    )


def read(data: Any, where: str) -> Iterator[Entry]:
    if not isinstance(data, dict):
        yield RefusedEntry(where, "This is not Chatbox's exported data.")
        return
    for key, value in data.items():
        if key.startswith("session:"):
            yield one(value, f"{where}: {key}", convert)
    for index, value in enumerate(
        v.arr(data.get("chat-sessions"), where)
        if isinstance(data.get("chat-sessions"), list)
        else []
    ):
        yield one(value, f"{where}: chat-sessions[{index}]", convert)


def convert(raw: Any, where: str) -> ImportedConversation:
    session = v.obj(raw, where)
    source_id = v.ident(session.get("id"), f"{where}.id")
    if source_id is None or not isinstance(session.get("messages"), list):
        raise ImportRefusedError(f"{where} is not a Chatbox session (no id or messages).")
    forks = v.opt_obj(session.get("messageForksHash"), f"{where}.messageForksHash")
    warnings: list[str] = []
    fallbacks = v.Fallbacks(warnings)
    nodes: list[forest.Node] = []
    system: list[str] = []
    # (messages of one continuation, the message it follows, its place among the siblings)
    pending: list[tuple[list[Any], str | None, float, str]] = [
        (session["messages"], None, 0.0, f"{where}.messages")
    ]
    seen_forks: set[str] = set()
    while pending:
        chain, parent, rank, at = pending.pop()
        for index, item in enumerate(chain):
            place = f"{at}[{index}]"
            try:
                message = v.obj(item, place)
            except ImportRefusedError as exc:  # one unreadable message, not the conversation
                fallbacks.message_left_out(place, exc)
                continue
            message_id = v.ident(message.get("id"), f"{place}.id") or f"{at}#{index}"
            try:
                role = v.text(message.get("role"), f"{place}.role")
                if role == "system" and parent is None:
                    system.append(_parts(message, place)[0])
                    continue
                imported = _message(message, message_id, role, place, fallbacks)
            except ImportRefusedError as exc:
                fallbacks.message_left_out(place, exc)
                imported = None  # hidden: what follows it still hangs in its place
            nodes.append(forest.Node(message_id, parent, imported, (rank,)))
            fork = forks.get(message_id)
            if isinstance(fork, dict) and message_id not in seen_forks:
                seen_forks.add(message_id)
                shown = v.index(fork.get("position"), f"{where}: fork {message_id}.position")
                for position, tail in enumerate(v.arr(fork.get("lists"), f"{where}: fork")):
                    if position != shown:
                        body = v.obj(tail, f"{where}: fork {message_id}.lists[{position}]")
                        pending.append(
                            (
                                v.arr(body.get("messages"), where),
                                message_id,
                                float(position),
                                f"{where}: fork {message_id}",
                            )
                        )
                next_rank = float(shown)  # the shown continuation's place among them
            else:
                next_rank = 0.0
            parent, rank = message_id, next_rank
    tree = forest.build(nodes, warnings)
    shown_path = [m for m in session["messages"] if isinstance(m, dict)]
    leaf = v.ident(shown_path[-1].get("id"), where) if shown_path else None
    conversation = ImportedConversation(
        FORMAT,
        source_id,
        fallbacks.text(session.get("name"), f"{where}.name"),
        tree.messages,
        system_prompt="\n\n".join(s for s in system if s),
        warnings=warnings,
    )
    return forest.finish(conversation, leaf, tree.aliases)


def _message(
    message: dict[str, Any], message_id: str, role: str, at: str, fallbacks: v.Fallbacks
) -> ImportedMessage | None:
    if role not in ("user", "assistant"):
        return None
    text, reasoning, trace, files = _parts(message, at)
    model = (
        fallbacks.opt_text(message.get("model"), f"{at}.model") if (role == "assistant") else None
    )
    created = fallbacks.time(message.get("timestamp"), f"{at}.timestamp")
    return ImportedMessage(
        message_id,
        None,
        role,
        text,
        created_at=created,
        model=model,
        reasoning=reasoning,
        trace=trace,
        attachments=files,
    )


def _parts(
    message: dict[str, Any], at: str
) -> tuple[str, str, str, tuple[ImportedAttachment, ...]]:
    parts = message.get("contentParts")
    if not isinstance(parts, list):
        return v.text(message.get("content"), f"{at}.content"), "", "", ()
    text, reasoning, trace, files = [], [], [], []
    for index, item in enumerate(parts):
        part = v.obj(item, f"{at}.contentParts[{index}]")
        kind = part.get("type")
        if kind == "text":
            text.append(v.text(part.get("text"), f"{at}.contentParts[{index}].text"))
        elif kind == "reasoning":
            reasoning.append(v.text(part.get("text"), f"{at}.contentParts[{index}].text"))
        elif kind == "tool-call":
            trace.append(v.clean(json.dumps(part, ensure_ascii=False)))
        elif kind == "image":
            files.append(
                ImportedAttachment(
                    v.text(part.get("storageKey"), f"{at}.contentParts[{index}]") or "image"
                )
            )
    return "".join(text), "\n\n".join(reasoning), "\n\n".join(trace), tuple(files)
