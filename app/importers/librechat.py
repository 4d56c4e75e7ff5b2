"""LibreChat's conversation export (JSON): `{conversationId, title, options{promptPrefix},
messages[]}`, the messages either flat (with "export branches" every branch, else the visible
path) or nested in `children` (the "recursive" option).

Messages hang below `parentMessageId` (the all-zero uuid marks a root); `isCreatedByUser` tells
the person from the model; agents keep the answer in `content` parts (`text`, `think`,
`tool_call`). The export names no current branch: the newest leaf is shown.
"""

from __future__ import annotations

import json
from typing import Any

from app.importers import forest
from app.importers import values as v
from app.importers.errors import ImportRefusedError
from app.importers.tree import ImportedAttachment, ImportedConversation, ImportedMessage

FORMAT = "librechat"
ROOT = "00000000-0000-0000-0000-000000000000"


def matches(element: dict[str, Any]) -> bool:
    return "conversationId" in element and isinstance(element.get("messages"), list)


def convert(raw: Any, where: str) -> ImportedConversation:
    conv = v.obj(raw, where)
    if not matches(conv):
        raise ImportRefusedError(f"{where} is not a LibreChat conversation.")
    source_id = v.ident(conv.get("conversationId"), f"{where}.conversationId")
    if source_id is None:
        raise ImportRefusedError(f"{where} has no conversationId.")
    warnings: list[str] = []
    fallbacks = v.Fallbacks(warnings)
    nodes = []
    pending = [(item, f"{where}.messages[{i}]") for i, item in enumerate(conv["messages"])]
    pending.reverse()
    while pending:  # nested `children` walked without recursion
        item, at = pending.pop()
        if isinstance(item, dict):  # its replies are read even when it cannot be
            children = v.arr(item.get("children"), f"{at}.children")
            pending.extend(reversed([(c, f"{at}.children[{i}]") for i, c in enumerate(children)]))
        try:
            node = _node(v.obj(item, at), at, fallbacks)
        except ImportRefusedError as exc:  # one unreadable message, not the conversation
            fallbacks.message_left_out(at, exc)
            continue
        if node is None:
            warnings.append(f"{at} has no messageId and was left out.")
        else:
            nodes.append(node)
    tree = forest.build(nodes, warnings)
    options = fallbacks.obj(conv.get("options"), f"{where}.options")
    conversation = ImportedConversation(
        FORMAT,
        source_id,
        fallbacks.text(conv.get("title"), f"{where}.title"),
        tree.messages,
        created_at=fallbacks.time(conv.get("createdAt"), f"{where}.createdAt"),
        updated_at=fallbacks.time(conv.get("updatedAt"), f"{where}.updatedAt"),
        system_prompt=fallbacks.text(options.get("promptPrefix"), f"{where}.options.promptPrefix"),
        warnings=warnings,
    )
    return forest.finish(conversation, None)


def _node(message: dict[str, Any], at: str, fallbacks: v.Fallbacks) -> forest.Node | None:
    """The message as a tree node; None when it has no id to hang replies below."""
    message_id = v.ident(message.get("messageId"), f"{at}.messageId")
    if message_id is None:
        return None
    parent = v.ident(message.get("parentMessageId"), f"{at}.parentMessageId")
    created = fallbacks.time(message.get("createdAt"), f"{at}.createdAt")
    imported = _message(message, message_id, created, at, fallbacks)
    return forest.Node(message_id, None if parent == ROOT else parent, imported, (created or 0.0,))


def _message(
    message: dict[str, Any], message_id: str, created: float | None, at: str, fallbacks: v.Fallbacks
) -> ImportedMessage:
    user = v.flag(message.get("isCreatedByUser"), f"{at}.isCreatedByUser")
    text = v.text(message.get("text"), f"{at}.text")
    parts: list[str] = []
    reasoning: list[str] = []
    trace: list[str] = []
    for index, item in enumerate(v.arr(message.get("content"), f"{at}.content")):
        part = v.obj(item, f"{at}.content[{index}]")
        kind = v.text(part.get("type"), f"{at}.content[{index}].type")
        value = part.get(kind)
        if kind == "text":
            parts.append(v.text(value if isinstance(value, str) else part.get("text"), at))
        elif kind == "think":
            reasoning.append(v.text(value if isinstance(value, str) else part.get("text"), at))
        elif kind == "tool_call":
            trace.append(v.clean(json.dumps(value, ensure_ascii=False)))
    attachments = [
        ImportedAttachment(v.text(f.get("filename"), f"{at}.files") or "file")
        for f in (v.obj(x, f"{at}.files") for x in v.arr(message.get("files"), f"{at}.files"))
    ]
    status = (
        "error"
        if message.get("error") is True
        else ("stopped" if message.get("unfinished") is True else "complete")
    )
    return ImportedMessage(
        message_id,
        None,
        "user" if user else "assistant",
        text or "".join(parts),
        created_at=created,
        model=None if user else fallbacks.opt_text(message.get("model"), f"{at}.model"),
        reasoning="\n\n".join(r for r in reasoning if r.strip()),
        attachments=tuple(attachments),
        trace="\n\n".join(trace),
        status=status,
    )
