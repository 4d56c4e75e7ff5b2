"""Branchwise's own exports: one conversation (`{"format": "branchwise-conversation"}`, read
by `app.store.export.from_json`, which checks every field) or a whole archive
(`{"format": "branchwise-archive", "conversations": [...]}`, written by `branchwise export`,
read one conversation at a time).

A conversation that came from another app keeps that source in the archive (`"source"`, and
each message's `"source_id"`), so restoring a backup and then importing the original export
again adds nothing. Others are known by when they were created and how they start.

Tool use comes back whole: a reply's `tool_calls`, a result's `tool_call_id` and `tool_name`.
They are checked here first (`app.importers.tool_use`), so one malformed call is left out with a
warning instead of refusing the conversation as `from_json` would.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any, cast

from app.images.store import is_image_record
from app.importers import forest, streams, tool_use
from app.importers import values as v
from app.importers.entries import Entry, RefusedEntry, one
from app.importers.errors import ImportRefusedError
from app.importers.sources import Member
from app.importers.tree import ImportedAttachment, ImportedConversation, ImportedMessage
from app.knowledge.excerpts import is_excerpt_record
from app.store import export as store_export
from app.store.compaction_records import remap_compaction
from app.store.records import StoreError

FORMAT = "branchwise"
ARCHIVE = "branchwise-archive"
ARCHIVE_VERSION = 1
STORE_FORMAT = store_export.FORMAT
_KINDS = frozenset({STORE_FORMAT, ARCHIVE})


def matches(element: dict[str, Any]) -> bool:
    kind = element.get("format")
    return isinstance(kind, str) and kind in _KINDS


def read_member(member: Member, kind: str) -> Iterator[Entry]:
    """An archive streamed conversation by conversation, or one conversation file."""
    if kind == store_export.FORMAT:
        with member.open() as raw:
            data = streams.load(raw, member.size + 1, member.where)
        yield one(data, member.where, convert)
        return
    with member.open() as raw:
        items = streams.items(raw, member.size + 1, member.where, "conversations.item")
        count = 0
        try:
            for item in items:
                count += 1
                yield one(item, f"{member.where}, conversation {count}", convert)
        except ImportRefusedError as exc:
            yield RefusedEntry(member.where, f"The rest of the archive could not be read: {exc}")


def convert(raw: Any, where: str) -> ImportedConversation:
    warnings: list[str] = []
    data = _checked_tool_use(v.obj(raw, where), warnings)
    try:
        record = store_export.from_json(data)
    except StoreError as exc:
        raise ImportRefusedError(f"{where}: {exc}") from None
    raw_messages = data["messages"]
    source = v.opt_obj(data.get("source"), f"{where}.source")
    source_format = v.text(source.get("format"), f"{where}.source.format") or FORMAT
    source_id = v.ident(source.get("id"), f"{where}.source.id") or _identity(record)
    ids = {
        m.id: v.ident(raw.get("source_id"), f"{where}: message {m.id}.source_id") or str(m.id)
        for raw, m in zip(raw_messages, record.messages, strict=True)
    }
    messages = []
    for m in record.messages:
        messages.append(
            ImportedMessage(
                ids[m.id],
                None if m.parent_id is None else ids[m.parent_id],
                m.role,
                m.content,
                created_at=m.created_at,
                model=m.model_id,
                reasoning=m.reasoning,
                attachments=tuple(
                    _attachment(a, record.images) for a in m.attachments if not is_excerpt_record(a)
                ),
                excerpts=tuple(a for a in m.attachments if is_excerpt_record(a)),
                trace=m.trace,
                # `from_json` made a streaming reply "interrupted" already: said again for the type.
                status="interrupted" if m.status == "streaming" else m.status,
                error=m.error,
                params=m.params,
                stats=m.stats,
                provenance=m.provenance,
                tool_calls=m.tool_calls,
                tool_call_id=m.tool_call_id,
                tool_name=m.tool_name,
                compaction=remap_compaction(m.compaction, ids),  # ids: the source ids
            )
        )
    tool_use.check_answers(messages, warnings)
    conversation = ImportedConversation(
        source_format,
        source_id,
        record.title,
        messages,
        created_at=record.created_at,
        updated_at=record.updated_at,
        system_prompt=record.system_prompt,
        model_id=record.model_id,
        params=record.params,
        pinned=record.pinned,
        archived=record.archived,
        warnings=warnings,
    )
    leaf = None if record.active_leaf_id is None else ids[record.active_leaf_id]
    return forest.finish(conversation, leaf)


def _checked_tool_use(data: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """`data` with each message's tool fields checked: what the store would refuse is left out
    (with a warning), so `from_json` takes the rest. Anything else is left for it to judge."""
    raw_messages = data.get("messages")
    if not isinstance(raw_messages, list):
        return data
    checked: list[Any] = []
    for index, item in enumerate(cast("list[object]", raw_messages)):
        if not isinstance(item, dict):
            checked.append(item)
            continue
        message = cast("dict[str, Any]", item)
        named = message.get("source_id") or message.get("id")  # as the writer names it
        label = f"Message {named}" if isinstance(named, str | int) else f"messages[{index}]"
        fixed = dict(message)
        if "tool_calls" in fixed:
            fixed["tool_calls"] = tool_use.calls(fixed["tool_calls"], label, warnings)
        for key in ("tool_call_id", "tool_name"):
            if key in fixed:
                fixed[key] = tool_use.text(fixed[key], f"{label}: its {key}", warnings)
        checked.append(fixed)
    return {**data, "messages": checked}


def _attachment(item: dict[str, Any], images: dict[str, bytes]) -> ImportedAttachment:
    """A file as exported, or an image with its bytes from the file's `"images"` (without
    them, a name marked missing)."""
    if is_image_record(item):
        return ImportedAttachment(
            item["name"],
            data=images.get(item["sha256"]),
            mime_type=f"image/{item['format'].lower()}",
            tokens=item["tokens"],
        )
    return ImportedAttachment(
        item["name"],
        text=item["text"] or None,
        mime_type=item.get("mime_type"),
        tokens=item["tokens"],
    )


def _identity(record: store_export.ConversationRecord) -> str:
    first = record.messages[0] if record.messages else None
    start = (first.created_at, first.content) if first else ()
    key = repr((record.created_at, *start))
    return "export-" + hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:24]
