"""Imported conversations into the store: one transaction per conversation, found again by
its source id, so importing the same export twice adds nothing and a longer export adds only
its new messages under the ones already there (nothing is overwritten or deleted). Every import
is a batch; `undo_batch` takes a whole import back out without touching what the person wrote
since.

Images found in an export (bytes Pillow reads as an image the app takes) go to the image store
and become image records, so a vision model can be asked about them; other file bytes are kept
as files named by their content under the data folder's `imported-files/`, which the message's
attachment entry names.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import re
import sqlite3
import time
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from app.images.store import ImageError, ImageStore
from app.importers.tree import ImportedAttachment, ImportedConversation, ImportedMessage
from app.store.compaction import write_compaction
from app.store.conversations import Store
from app.store.provenance import imported_provenance
from app.store.records import (
    StoreError,
    check_excerpt,
    check_optional_text,
    check_text,
    dump_mapping,
    dump_tool_calls,
)

FILES_DIR = "imported-files"
_NO_MESSAGES = "It has no messages."
_DELETED = "It was imported before and then deleted."


class ImportStatus(StrEnum):
    """How one conversation of an import ended. A StrEnum: `branchwise import --json` writes
    its value."""

    IMPORTED = "imported"
    UPDATED = "updated"  # known already: only its new messages were added
    UNCHANGED = "unchanged"  # known already, with nothing new
    SKIPPED = "skipped"  # no messages, or imported before and deleted since
    REFUSED = "refused"  # the store could not take it (or its entry could not be read)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened to one conversation (or one refused entry) of an import."""

    status: ImportStatus
    where: str
    title: str | None = None
    source_format: str | None = None
    source_id: str | None = None
    new_messages: int = 0
    conversation_id: int | None = None
    reason: str = ""
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class UndoResult:
    removed_conversations: int
    removed_messages: int
    kept_messages: int  # imported messages the person has since continued from: left in place
    # Every conversation the undo took messages from (those it removed whole among them).
    conversation_ids: frozenset[int] = frozenset()


def begin_batch(store: Store, label: str) -> int:
    with store.transaction() as db:
        (batch_id,) = db.execute(
            "INSERT INTO import_batches (created_at, label) VALUES (?, ?) RETURNING id",
            (time.time(), label),
        ).fetchone()
    return int(batch_id)


def drop_empty_batch(store: Store, batch_id: int) -> None:
    """Forget a batch that added nothing (a repeated import), so undo lists stay meaningful."""
    with store.transaction() as db:
        db.execute(
            "DELETE FROM import_batches WHERE id = ? AND NOT EXISTS (SELECT 1 FROM messages"
            " WHERE import_batch = ?) AND NOT EXISTS (SELECT 1 FROM conversations WHERE"
            " import_batch = ?)",
            (batch_id, batch_id, batch_id),
        )


def plan(store: Store | None, conversation: ImportedConversation, where: str) -> Outcome:
    """What `write` would do, without writing (the dry run)."""
    outcome = _outcome(conversation, where)
    if not conversation.messages:
        return replace(outcome, status=ImportStatus.SKIPPED, reason=_NO_MESSAGES)
    row, known = (None, set()) if store is None else _existing(store, conversation)
    if row is not None and row[1] is not None:
        return replace(outcome, status=ImportStatus.SKIPPED, reason=_DELETED)
    new = sum(1 for m in conversation.messages if m.source_id not in known)
    return replace(outcome, status=_new_or_updated(row is None, new), new_messages=new)


def write(store: Store, batch_id: int, conversation: ImportedConversation, where: str) -> Outcome:
    """Add the conversation, or its new messages, in one transaction; a refusal (text the
    store cannot hold) leaves nothing of it behind."""
    outcome = _outcome(conversation, where)
    if not conversation.messages:
        return replace(outcome, status=ImportStatus.SKIPPED, reason=_NO_MESSAGES)
    files = store.path.parent / FILES_DIR
    conversation_id: int | None = None
    try:
        rows = [
            _row(m, files, store.images, conversation.source_format) for m in conversation.messages
        ]
        with store.transaction() as db:
            found = db.execute(
                "SELECT id, deleted_at FROM conversations WHERE source_format = ? AND"
                " source_id = ?",
                (conversation.source_format, conversation.source_id),
            ).fetchone()
            if found is not None and found[1] is not None:
                return replace(outcome, status=ImportStatus.SKIPPED, reason=_DELETED)
            conversation_id = (
                _insert_conversation(db, conversation, batch_id) if found is None else int(found[0])
            )
            added = _insert_messages(
                db, conversation_id, conversation, rows, batch_id, new=found is None
            )
    except StoreError as exc:
        return replace(
            outcome, status=ImportStatus.REFUSED, reason=str(exc), conversation_id=conversation_id
        )
    return replace(
        outcome,
        status=_new_or_updated(found is None, added),
        new_messages=added,
        conversation_id=conversation_id,
    )


def undo_batch(store: Store, batch_id: int) -> UndoResult:
    """Remove what import `batch_id` added: its messages (except those the person continued
    from since) and the conversations it created that are then empty."""
    with store.transaction() as db:
        batch = {
            row[0]
            for row in db.execute("SELECT id FROM messages WHERE import_batch = ?", (batch_id,))
        }
        conversations = [
            row[0]
            for row in db.execute(
                "SELECT DISTINCT conversation_id FROM messages WHERE import_batch = ?", (batch_id,)
            )
        ]
        keep: set[int] = set()
        for conversation_id in conversations:
            parents = dict(
                db.execute(
                    "SELECT id, parent_id FROM messages WHERE conversation_id = ?",
                    (conversation_id,),
                ).fetchall()
            )
            for message_id in parents:
                if message_id in batch:
                    continue
                up = parents[message_id]
                while up is not None and up not in keep:
                    if up in batch:
                        keep.add(up)
                    up = parents.get(up)
        doomed = sorted(batch - keep)
        db.execute(
            "UPDATE messages SET import_batch = NULL WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(keep)),),
        )
        db.execute(
            "DELETE FROM messages WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(doomed),),
        )
        removed = db.execute(
            "DELETE FROM conversations WHERE import_batch = ? AND NOT EXISTS (SELECT 1 FROM"
            " messages WHERE conversation_id = conversations.id)",
            (batch_id,),
        ).rowcount
        db.execute(
            "UPDATE conversations SET import_batch = NULL WHERE import_batch = ?", (batch_id,)
        )
        for conversation_id in conversations:
            leaf = Store.latest_leaf_in(db, conversation_id)
            db.execute(
                "UPDATE conversations SET active_leaf_id = ? WHERE id = ? AND"
                " active_leaf_id IS NULL",
                (leaf, conversation_id),
            )
        db.execute("DELETE FROM import_batches WHERE id = ?", (batch_id,))
    store.collect_images()
    return UndoResult(removed, len(doomed), len(keep), frozenset(conversations))


def _new_or_updated(new: bool, added: int) -> ImportStatus:
    """A conversation not known before is imported; a known one updated by the messages added."""
    if new:
        return ImportStatus.IMPORTED
    return ImportStatus.UPDATED if added else ImportStatus.UNCHANGED


def _outcome(conversation: ImportedConversation, where: str) -> Outcome:
    return Outcome(
        ImportStatus.IMPORTED,
        where,
        conversation.title,
        conversation.source_format,
        conversation.source_id,
        warnings=tuple(conversation.warnings),
    )


def _existing(
    store: Store, conversation: ImportedConversation
) -> tuple[tuple[Any, ...] | None, set[str]]:
    with store.transaction() as db:
        row = db.execute(
            "SELECT id, deleted_at FROM conversations WHERE source_format = ? AND source_id = ?",
            (conversation.source_format, conversation.source_id),
        ).fetchone()
        if row is None:
            return None, set()
        known = {
            r[0]
            for r in db.execute(
                "SELECT source_id FROM messages"
                " WHERE conversation_id = ? AND source_id IS NOT NULL",
                (row[0],),
            )
        }
    return row, known


def _insert_conversation(
    db: sqlite3.Connection, conversation: ImportedConversation, batch_id: int
) -> int:
    times = [m.created_at for m in conversation.messages if m.created_at is not None]
    created = conversation.created_at or (min(times) if times else time.time())
    updated = max(conversation.updated_at or created, max(times, default=created))
    title = check_text(conversation.title, "The title", allow_empty=False)
    (conversation_id,) = db.execute(
        "INSERT INTO conversations (title, created_at, updated_at, system_prompt, model_id,"
        " params, pinned, archived, source_format, source_id, import_batch)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (
            title,
            created,
            updated,
            check_text(conversation.system_prompt, "The system prompt", allow_empty=True),
            check_optional_text(conversation.model_id, "The model id"),
            dump_mapping(conversation.params, "The conversation's settings"),
            conversation.pinned,
            conversation.archived,
            conversation.source_format,
            conversation.source_id,
            batch_id,
        ),
    ).fetchone()
    return int(conversation_id)


def _insert_messages(
    db: sqlite3.Connection,
    conversation_id: int,
    conversation: ImportedConversation,
    rows: list[tuple[Any, ...]],
    batch_id: int,
    new: bool,
) -> int:
    ids = dict(
        db.execute(
            "SELECT source_id, id FROM messages"
            " WHERE conversation_id = ? AND source_id IS NOT NULL",
            (conversation_id,),
        ).fetchall()
    )
    times: dict[str, float] = {}
    fallback = conversation.created_at or time.time()
    added = 0
    compacted: list[ImportedMessage] = []
    for message, row in zip(conversation.messages, rows, strict=True):
        parent_time = times.get(message.parent_id or "", fallback)
        times[message.source_id] = message.created_at or parent_time
        if message.source_id in ids:
            continue
        parent = None if message.parent_id is None else ids[message.parent_id]
        (ids[message.source_id],) = db.execute(
            "INSERT INTO messages (conversation_id, parent_id, role, content, created_at, status,"
            " model_id, params, stats, error, reasoning, attachments, trace, provenance,"
            " tool_calls, tool_call_id, tool_name, source_id, import_batch)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                conversation_id,
                parent,
                message.role,
                row[0],
                times[message.source_id],
                message.status,
                *row[1:],
                message.source_id,
                batch_id,
            ),
        ).fetchone()
        added += 1
        compacted += [message] if message.compaction else []  # mapped once all are in
    write_compaction(db, [(ids[m.source_id], m.compaction) for m in compacted], ids)
    leaf = conversation.active_leaf_id
    if added:
        (active,) = db.execute(
            "SELECT active_leaf_id FROM conversations WHERE id = ?", (conversation_id,)
        ).fetchone()
        if new or active is None:
            target = ids.get(leaf) if leaf is not None else None
            target = target or Store.latest_leaf_in(db, conversation_id)
            assert target is not None  # messages were just added: the conversation has a leaf
            Store.activate_leaf(db, conversation_id, target)
        db.execute(
            "UPDATE conversations SET updated_at = max(updated_at, ?) WHERE id = ?",
            (max(times.values()), conversation_id),
        )
    return added


def _row(
    message: ImportedMessage, files: Path, images: ImageStore, source_format: str
) -> tuple[Any, ...]:
    """The checked column values of a message: content, model, params, stats, error,
    reasoning, attachments, trace, provenance, tool calls, tool call id, tool name."""
    what = f"Message {message.source_id}"
    provenance = message.provenance
    if provenance is None:
        provenance = (
            imported_provenance(source_format, message.model) if message.role == "assistant" else {}
        )
    return (
        check_text(message.content, what, allow_empty=True),
        check_optional_text(message.model, f"{what}: the model"),
        dump_mapping(message.params, f"{what}: the settings"),
        dump_mapping(message.stats, f"{what}: the statistics"),
        check_optional_text(message.error, f"{what}: the error"),
        check_text(message.reasoning, f"{what}: the reasoning", allow_empty=True),
        json.dumps(
            [
                *(_attachment(a, files, images, what) for a in message.attachments),
                *(check_excerpt(e, f"{what}: an excerpt") for e in message.excerpts),
            ],
            ensure_ascii=False,
            sort_keys=True,
        ),
        check_text(message.trace, f"{what}: the trace", allow_empty=True),
        dump_mapping(provenance, f"{what}: the provenance"),
        dump_tool_calls(message.tool_calls, f"{what}: the tool calls"),
        check_optional_text(message.tool_call_id, f"{what}: the tool call id"),
        check_optional_text(message.tool_name, f"{what}: the tool name"),
    )


def _attachment(
    attachment: ImportedAttachment, files: Path, images: ImageStore, what: str
) -> dict[str, Any]:
    name = check_text(attachment.name or "file", f"{what}: a file name", allow_empty=False)
    if attachment.data is not None and attachment.text is None:
        try:
            return images.add_bytes(attachment.data, name).as_record(attachment.tokens)
        except ImageError:
            pass  # not an image the app takes (or damaged): kept as a file, as any other
    text = check_text(attachment.text or "", f"{what}: {name}", allow_empty=True)
    entry: dict[str, Any] = {
        "name": name,
        "size": len(text.encode()),
        "tokens": attachment.tokens,
        "text": text,
    }
    if attachment.mime_type:
        entry["mime_type"] = attachment.mime_type
    if attachment.missing:
        entry["missing"] = True
    if attachment.data is not None:
        digest = hashlib.sha256(attachment.data).hexdigest()[:32]
        suffix = Path(name).suffix or mimetypes.guess_extension(attachment.mime_type or "") or ""
        target = files / f"{digest}{re.sub(r'[^A-Za-z0-9.]', '', suffix)[:16]}"
        try:
            if not target.exists():
                files.mkdir(parents=True, exist_ok=True)
                target.write_bytes(attachment.data)
        except OSError as exc:
            raise StoreError(f"{what}: {name} could not be saved: {exc}.") from exc
        entry["size"] = len(attachment.data)
        entry["file"] = f"{FILES_DIR}/{target.name}"
    return entry
