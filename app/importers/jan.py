"""Jan's data folder: `threads/<id>/thread.json` `{id, title, assistants[{instructions}],
created, updated}` beside `messages.jsonl`, one message per line `{id, role, content[{type:
"text", text{value}}], created_at (ms), metadata{parentId, activeChildId}}`.

Since Jan 0.8.3 messages hang below `metadata.parentId` (null: a root); without the key a thread
is a plain chain in file order. The shown branch follows each message's `activeChildId`, else
its newest child. A line cut short by a crash is skipped with a warning.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.importers import forest, streams
from app.importers import values as v
from app.importers.entries import Entry, one
from app.importers.errors import ImportRefusedError
from app.importers.sources import Member, Source
from app.importers.tree import (
    ImportedConversation,
    ImportedMessage,
    ImportedRole,
    inline_attachment,
)

FORMAT = "jan"
MAX_FILE_BYTES = 512 * 1024 * 1024


def is_thread(member: Member) -> bool:
    return member.basename == "thread.json"


def read(source: Source) -> Iterator[Entry]:
    for member in source.members:
        if not is_thread(member):
            continue
        folder = member.name[: -len("thread.json")]
        lines = source.member(f"{folder}messages.jsonl")
        yield one(member, member.where, lambda m, where, lines=lines: _convert(m, lines, where))


def _convert(member: Member, lines: Member | None, where: str) -> ImportedConversation:
    with member.open() as raw:
        thread = v.obj(streams.load(raw, MAX_FILE_BYTES, where), where)
    source_id = v.ident(thread.get("id"), f"{where}.id") or member.name
    warnings: list[str] = []
    fallbacks = v.Fallbacks(warnings)
    raw_messages: list[dict[str, Any]] = []
    for number, line in enumerate(
        lines.read(MAX_FILE_BYTES).splitlines() if lines else [], start=1
    ):
        if not line.strip():
            continue
        try:
            raw_messages.append(v.obj(streams.loads(line, where), f"{where}, line {number}"))
        except ImportRefusedError:
            warnings.append(f"messages.jsonl line {number} is cut short or damaged; left out.")
    metas = [
        fallbacks.obj(m.get("metadata"), f"{where}: message {i + 1}.metadata")
        for i, m in enumerate(raw_messages)
    ]
    tree_mode = any("parentId" in meta for meta in metas)
    nodes, active = [], {}
    previous = None
    for index, (message, meta) in enumerate(zip(raw_messages, metas, strict=True)):
        at = f"{where}: message {index + 1}"
        message_id = v.ident(message.get("id"), f"{at}.id") or f"#{index}"
        parent = v.ident(meta.get("parentId"), f"{at}.parentId") if tree_mode else previous
        child = v.ident(meta.get("activeChildId"), f"{at}.activeChildId")
        if child:
            active[message_id] = child
        previous = message_id
        role = v.text(message.get("role"), f"{at}.role")
        created = fallbacks.time(message.get("created_at"), f"{at}.created_at")
        imported = (
            _message(message, message_id, role, created, at)
            if role in ("user", "assistant")
            else None
        )
        nodes.append(forest.Node(message_id, parent, imported, (created or 0.0,)))
    tree = forest.build(nodes, warnings)
    assistants = fallbacks.arr(thread.get("assistants"), f"{where}.assistants")
    first = fallbacks.obj(assistants[0] if assistants else None, f"{where}.assistants[0]")
    conversation = ImportedConversation(
        FORMAT,
        source_id,
        fallbacks.text(thread.get("title"), f"{where}.title"),
        tree.messages,
        created_at=fallbacks.time(thread.get("created"), f"{where}.created"),
        updated_at=fallbacks.time(thread.get("updated"), f"{where}.updated"),
        system_prompt=fallbacks.text(first.get("instructions"), f"{where}.instructions"),
        warnings=warnings,
    )
    return forest.finish(conversation, _shown_leaf(tree.messages, active))


def _shown_leaf(messages: list[ImportedMessage], active: dict[str, str]) -> str | None:
    """Follow `activeChildId`, else the newest child, from the newest root."""
    children: dict[str | None, list[ImportedMessage]] = {}
    for message in messages:
        children.setdefault(message.parent_id, []).append(message)
    node: str | None = None
    while children.get(node):
        options = children[node]
        chosen = next(
            (m for m in options if node is not None and m.source_id == active.get(node)), None
        )
        node = (chosen or max(options, key=lambda m: m.created_at or 0.0)).source_id
    return node


def _message(
    message: dict[str, Any], message_id: str, role: ImportedRole, created: float | None, at: str
) -> ImportedMessage:
    texts, files = [], []
    for index, item in enumerate(v.arr(message.get("content"), f"{at}.content")):
        part = v.obj(item, f"{at}.content[{index}]")
        if part.get("type") == "text":
            body = part.get("text")
            value = v.opt_obj(body, at).get("value") if isinstance(body, dict) else body
            texts.append(v.text(value, f"{at}.content[{index}].text"))
        elif part.get("type") == "image_url":
            # {"url": …} as OpenAI writes it; any other shape is only a name, as before.
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            url = url if isinstance(url, str) else ""
            files.append(inline_attachment(f"image {index + 1}", url))
    return ImportedMessage(
        message_id, None, role, "".join(texts), created_at=created, attachments=tuple(files)
    )
