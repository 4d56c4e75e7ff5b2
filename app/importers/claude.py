"""Claude.ai's data export: `conversations.json` (alone or in the export zip), an array of
`{uuid, name, created_at, updated_at, chat_messages[]}`.

Messages hang below `parent_message_uuid` (the all-zero uuid, or null, marks a root); exports
from before 2025 have no such key and are a plain chain in array order. Siblings are ordered by
creation time; the export names no current branch, so the newest leaf is shown. `thinking`
blocks become reasoning, tool use and results the trace, `extracted_content` of attached files
an attachment with text; files whose bytes the export lacks (`files[]`) are listed as missing.
"""

from __future__ import annotations

import json
from typing import Any

from app.importers import forest
from app.importers import values as v
from app.importers.errors import ImportRefusedError
from app.importers.tree import (
    ImportedAttachment,
    ImportedConversation,
    ImportedMessage,
    ImportedRole,
)

FORMAT = "claude"
ROOT = "00000000-0000-4000-8000-000000000000"
_ROLES: dict[str, ImportedRole] = {"human": "user", "user": "user", "assistant": "assistant"}


def convert(raw: Any, where: str) -> ImportedConversation:
    conv = v.obj(raw, where)
    chat = conv.get("chat_messages")
    if not isinstance(chat, list):
        raise ImportRefusedError(f"{where} is not a Claude conversation (no chat_messages).")
    source_id = v.ident(conv.get("uuid"), f"{where}.uuid")
    if source_id is None:
        raise ImportRefusedError(f"{where} has no uuid.")
    warnings: list[str] = []
    fallbacks = v.Fallbacks(warnings)
    nodes = []
    previous: str | None = None
    for index, item in enumerate(chat):
        at = f"{where}.chat_messages[{index}]"
        try:
            node = _node(v.obj(item, at), index, previous, at, fallbacks)
        except ImportRefusedError as exc:  # one unreadable message, not the conversation
            fallbacks.message_left_out(f"Message {index + 1}", exc)
            continue
        if node.message is None:
            warnings.append(
                f"Message {node.id} is not from the person or the model; it was left out."
            )
        nodes.append(node)
        previous = node.id
    tree = forest.build(nodes, warnings)
    imported_conv = ImportedConversation(
        FORMAT,
        source_id,
        fallbacks.text(conv.get("name"), f"{where}.name"),
        tree.messages,
        created_at=fallbacks.time(conv.get("created_at"), f"{where}.created_at"),
        updated_at=fallbacks.time(conv.get("updated_at"), f"{where}.updated_at"),
        warnings=warnings,
    )
    return forest.finish(imported_conv, None)


def _node(
    message: dict[str, Any], index: int, previous: str | None, at: str, fallbacks: v.Fallbacks
) -> forest.Node:
    """One message as a tree node (its message None when the sender is not a person or the
    model); refuses a message whose own fields cannot be read."""
    message_id = v.ident(message.get("uuid"), f"{at}.uuid") or f"#{index}"
    if "parent_message_uuid" in message:
        parent = v.ident(message.get("parent_message_uuid"), f"{at}.parent_message_uuid")
        parent = None if parent == ROOT else parent
    else:
        parent = previous
    role = _ROLES.get(v.text(message.get("sender"), f"{at}.sender"))
    created = fallbacks.time(message.get("created_at"), f"{at}.created_at")
    imported = None if role is None else _message(message, message_id, role, created, at)
    return forest.Node(message_id, parent, imported, (created or 0.0,))


def _message(
    message: dict[str, Any], message_id: str, role: ImportedRole, created: float | None, at: str
) -> ImportedMessage:
    text: list[str] = []
    reasoning: list[str] = []
    trace: list[str] = []
    for index, block in enumerate(v.arr(message.get("content"), f"{at}.content")):
        part = v.obj(block, f"{at}.content[{index}]")
        kind = v.text(part.get("type"), f"{at}.content[{index}].type")
        if kind == "text":
            text.append(v.text(part.get("text"), f"{at}.content[{index}].text"))
        elif kind == "thinking":
            thought = v.text(part.get("thinking"), f"{at}.content[{index}].thinking")
            if not thought:
                summaries = v.arr(part.get("summaries"), f"{at}.content[{index}].summaries")
                thought = "\n".join(v.text(v.obj(s, at).get("summary"), at) for s in summaries)
            if thought.strip():
                reasoning.append(thought.strip())
        elif kind == "tool_use":
            name = v.text(part.get("name"), f"{at}.content[{index}].name")
            trace.append(f"Used {name}:\n{_dump(part.get('input'))}")
        elif kind == "tool_result":
            name = v.text(part.get("name"), f"{at}.content[{index}].name")
            pieces = [
                v.text(v.obj(c, at).get("text"), at)
                for c in v.arr(part.get("content"), f"{at}.content[{index}].content")
                if isinstance(c, dict)
            ]
            trace.append(f"Result of {name}:\n" + "\n".join(p for p in pieces if p))
    answer = "".join(text) or v.text(message.get("text"), f"{at}.text")
    attachments = [
        ImportedAttachment(
            v.text(a.get("file_name"), f"{at}.attachments") or "attachment",
            text=v.text(a.get("extracted_content"), f"{at}.attachments") or None,
        )
        for a in (v.obj(x, f"{at}.attachments") for x in v.arr(message.get("attachments"), at))
    ]
    attachments += [
        ImportedAttachment(v.text(f.get("file_name"), f"{at}.files") or "file")
        for f in (v.obj(x, f"{at}.files") for x in v.arr(message.get("files"), f"{at}.files"))
    ]
    return ImportedMessage(
        message_id,
        None,
        role,
        answer,
        created_at=created,
        reasoning="\n\n".join(reasoning),
        attachments=tuple(attachments),
        trace="\n\n".join(trace),
    )


def _dump(value: object) -> str:
    return v.clean(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
