"""Open WebUI's chat export: a JSON array of chat rows `{id, title, chat{history{messages,
currentId}, params{system}, messages[]}, created_at, updated_at}` (one chat is exported as an
array of one; a bare row is taken too).

Messages hang below `parentId`, siblings in the parent's `childrenIds` order; `currentId` is the
active leaf. Reasoning and tool calls sit inside the text as `<details type="reasoning">` and
`<details type="tool_calls">` blocks: they become the reasoning and the trace. Images inline as
data URLs are kept; files only referenced by URL are listed as not in the export.
"""

from __future__ import annotations

import html
import re
from typing import Any

from app.importers import forest
from app.importers import values as v
from app.importers.errors import ImportRefusedError
from app.importers.tree import (
    ImportedAttachment,
    ImportedConversation,
    ImportedMessage,
    ImportedRole,
    inline_attachment,
)

FORMAT = "openwebui"
_DETAILS = re.compile(
    r'<details\s+type="(?P<kind>[a-z_]+)"[^>]*>\s*(?:<summary>.*?</summary>)?(?P<body>.*?)'
    r"</details>\s*",
    re.S,
)


def matches(element: dict[str, Any]) -> bool:
    chat = element.get("chat")
    return isinstance(chat, dict) and ("history" in chat or "messages" in chat)


def convert(raw: Any, where: str) -> ImportedConversation:
    row = v.obj(raw, where)
    if not matches(row):
        raise ImportRefusedError(f"{where} is not an Open WebUI chat (no chat history).")
    chat = v.obj(row.get("chat"), f"{where}.chat")
    source_id = v.ident(row.get("id"), f"{where}.id") or v.ident(chat.get("id"), f"{where}.id")
    if source_id is None:
        raise ImportRefusedError(f"{where} has no chat id.")
    history = v.opt_obj(chat.get("history"), f"{where}.chat.history")
    raw_messages = v.opt_obj(history.get("messages"), f"{where}.chat.history.messages")
    warnings: list[str] = []
    fallbacks = v.Fallbacks(warnings)
    ranks: dict[str, tuple[float, ...]] = {}
    nodes = []
    if not raw_messages:  # an old export: only the linear `messages` list
        previous = None
        for index, item in enumerate(v.arr(chat.get("messages"), f"{where}.chat.messages")):
            if not isinstance(item, dict):
                raw_messages[f"#{index}"] = item  # left out below, with a warning
                continue
            message_id = v.ident(item.get("id"), where) or f"#{index}"
            raw_messages[message_id] = {**item, "parentId": previous}
            previous = message_id
    for key, item in raw_messages.items():
        at = f"{where}: message {key}"
        if not isinstance(item, dict):
            continue  # left out below, with a warning
        for position, child in enumerate(v.arr(item.get("childrenIds"), f"{at}.childrenIds")):
            child_id = v.ident(child, f"{at}.childrenIds")
            if child_id is not None:
                ranks.setdefault(child_id, (0.0, float(position)))
    for key, item in raw_messages.items():
        at = f"{where}: message {key}"
        try:
            nodes.append(_node(v.obj(item, at), key, ranks, at, fallbacks))
        except ImportRefusedError as exc:  # one unreadable message, not the conversation
            fallbacks.message_left_out(f"Message {key}", exc)
    tree = forest.build(nodes, warnings)
    params = fallbacks.obj(chat.get("params"), f"{where}.chat.params")
    conversation = ImportedConversation(
        FORMAT,
        source_id,
        fallbacks.text(row.get("title"), f"{where}.title")
        or fallbacks.text(chat.get("title"), f"{where}.chat.title"),
        tree.messages,
        created_at=fallbacks.time(row.get("created_at"), f"{where}.created_at"),
        updated_at=fallbacks.time(row.get("updated_at"), f"{where}.updated_at"),
        system_prompt=fallbacks.text(params.get("system"), f"{where}.chat.params.system"),
        warnings=warnings,
    )
    pointer = v.ident(history.get("currentId"), f"{where}.chat.history.currentId")
    return forest.finish(conversation, pointer, tree.aliases)


def _node(
    message: dict[str, Any],
    key: str,
    ranks: dict[str, tuple[float, ...]],
    at: str,
    fallbacks: v.Fallbacks,
) -> forest.Node:
    message_id = v.ident(message.get("id"), f"{at}.id") or key
    role = v.text(message.get("role"), f"{at}.role")
    created = fallbacks.time(message.get("timestamp"), f"{at}.timestamp")
    imported = (
        _message(message, message_id, role, created, at, fallbacks)
        if role in ("user", "assistant")
        else None
    )
    rank = ranks.get(message_id, (1.0, created or 0.0))
    return forest.Node(message_id, v.ident(message.get("parentId"), at), imported, rank)


def _message(
    message: dict[str, Any],
    message_id: str,
    role: ImportedRole,
    created: float | None,
    at: str,
    fallbacks: v.Fallbacks,
) -> ImportedMessage:
    content = message.get("content")
    if isinstance(content, list):  # some versions store OpenAI-style parts
        content = "".join(
            v.text(v.obj(p, at).get("text"), f"{at}.content")
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
    body = v.text(content, f"{at}.content")
    reasoning: list[str] = []
    trace: list[str] = []

    def take(match: re.Match[str]) -> str:
        inner = html.unescape(match.group("body")).strip()
        if match.group("kind") == "reasoning":
            lines = [
                line[1:].lstrip() if line.startswith(">") else line for line in inner.splitlines()
            ]
            reasoning.append("\n".join(lines).strip())
        else:
            trace.append(inner)
        return ""

    body = _DETAILS.sub(take, body) if "<details" in body else body
    model = fallbacks.opt_text(message.get("model"), f"{at}.model")
    return ImportedMessage(
        message_id,
        None,
        role,
        body.strip(),
        created_at=created,
        model=model if role == "assistant" else None,
        reasoning="\n\n".join(r for r in reasoning if r),
        attachments=tuple(_files(message, at)),
        trace="\n\n".join(t for t in trace if t),
        status="error" if message.get("error") not in (None, False, "") else "complete",
    )


def _files(message: dict[str, Any], at: str) -> list[ImportedAttachment]:
    found = []
    for index, item in enumerate(v.arr(message.get("files"), f"{at}.files")):
        entry = v.obj(item, f"{at}.files[{index}]")
        url = v.text(entry.get("url"), f"{at}.files[{index}].url")
        name = v.text(entry.get("name"), f"{at}.files[{index}].name") or (
            f"{v.text(entry.get('type'), at) or 'file'} {index + 1}"
        )
        found.append(inline_attachment(name, url))
    return found
