"""The lifecycle of a streaming reply in the store: begun empty with status "streaming", grown
by a `ReplyWriter`, finished with a final status. A reply still streaming when the store closes is
finished as "interrupted"; one left streaming by a crash becomes "interrupted" at the next open,
keeping its text.

Writers are held strongly until their final write succeeds, so no text in memory is ever dropped: a
writer whose final write fails is retried at close, and if the store still refuses it then, its text
goes to the recovery file (`app.store.reply_recovery`) that the next open puts back.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

from app.store import reply_recovery
from app.store.records import (
    FINAL_STATUSES,
    InvalidInputError,
    Message,
    Status,
    StoreError,
    check_optional_text,
    check_status,
    check_text,
    dump_mapping,
    dump_tool_calls,
)
from app.store.reply_recovery import UnsavedReply
from app.store.reply_writer import ReplyWriter
from app.store.tool_messages import ToolMessages

_log = logging.getLogger(__name__)


class StreamingReplies(ToolMessages):
    """The reply operations of `Store`."""

    def __init__(self, conn: sqlite3.Connection, path: Path, recovered_from: Path | None) -> None:
        super().__init__(conn, path, recovered_from)
        # Strong references: a writer holds text not yet on disk until its final write succeeds.
        self._writers: dict[int, ReplyWriter] = {}
        # For the person, when replies saved in the recovery file were (or could not be) put back.
        self.recovery_report: str | None = None

    def begin_reply(
        self,
        conversation_id: int,
        parent_id: int | None,
        model_id: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> Message:
        """An empty assistant message, status "streaming", as the new active leaf. Beginning a
        second reply under the same parent is how a reply is regenerated. A message without a
        parent (a conversation's first) has nothing to answer: refused."""
        if parent_id is None:
            raise InvalidInputError("A reply needs the message it answers.")
        return self._add_message(
            conversation_id, parent_id, "assistant", "", "streaming", model_id, params
        )

    def reply_writer(self, message_id: int, interval_s: float = 1.0) -> ReplyWriter:
        """A buffer for a streaming reply's tokens; `close()` finishes it if nobody else did."""
        writer = ReplyWriter(self, self._streaming(message_id), interval_s=interval_s)
        # Forget the writers of replies deleted since (the rest hold text not yet on disk).
        for gone in [m for m in self._writers if not self._still_streaming(m)]:
            del self._writers[gone]
        self._writers[message_id] = writer
        return writer

    def update_streaming(self, message_id: int, content: str, reasoning: str = "") -> None:
        """The reply's answer and reasoning so far."""
        check_text(content, "The reply", allow_empty=True)
        check_text(reasoning, "The reply's reasoning", allow_empty=True)
        with self._write() as db:
            updated = db.execute(
                "UPDATE messages SET content = ?, reasoning = ? WHERE id = ?"
                " AND status = 'streaming'",
                (content, reasoning, message_id),
            ).rowcount
        if not updated:
            self._streaming(message_id)

    def finish_reply(
        self,
        message_id: int,
        content: str,
        status: Status = "complete",
        stats: dict[str, Any] | None = None,
        error: str | None = None,
        reasoning: str = "",
        tool_calls: list[dict[str, Any]] | None = None,
        provenance: dict[str, Any] | None = None,
    ) -> Message:
        """`tool_calls`: the calls the reply ends with, {"id", "name", "arguments"} each;
        `provenance`: where the reply came from (app.store.provenance)."""
        check_text(content, "The reply", allow_empty=True)
        check_text(reasoning, "The reply's reasoning", allow_empty=True)
        check_status(status, FINAL_STATUSES)
        stats_json = dump_mapping(stats, "The reply statistics")
        calls_json = dump_tool_calls(tool_calls)
        origin_json = dump_mapping(provenance, "The reply's provenance")
        check_optional_text(error, "The error message")
        message = self._streaming(message_id)
        with self._write() as db:
            db.execute(
                "UPDATE messages SET content = ?, status = ?, stats = ?, error = ?, reasoning = ?,"
                " tool_calls = ?, provenance = ? WHERE id = ?",
                (
                    content,
                    status,
                    stats_json,
                    error,
                    reasoning,
                    calls_json,
                    origin_json,
                    message_id,
                ),
            )
            self._touch(db, message.conversation_id)
        self._writers.pop(message_id, None)
        return self.get_message(message_id)

    def _still_streaming(self, message_id: int) -> bool:
        """False when the reply was finished or deleted without its writer."""
        row = self._one("SELECT status FROM messages WHERE id = ?", (message_id,))
        return row is not None and row[0] == "streaming"

    def _streaming(self, message_id: int) -> Message:
        message = self.get_message(message_id)
        if message.status != "streaming":
            raise InvalidInputError(
                f"Message {message_id} is not a reply being written (its status is "
                f"{message.status!r})."
            )
        return message

    def _interrupt_orphaned_replies(self) -> None:
        with self._write() as db:
            # Nobody streams into these any more: the app that did stopped without saying.
            db.execute("UPDATE messages SET status = 'interrupted' WHERE status = 'streaming'")

    def _settle_open_writers(self) -> None:
        """Finish every writer still open: with the status its failed final write was given,
        else as "interrupted". What the database still refuses goes to the recovery file."""
        unsaved: list[UnsavedReply] = []
        for writer in list(self._writers.values()):
            try:
                if not self._still_streaming(writer.message_id):
                    continue  # finished or deleted without its writer
                writer.finish("interrupted")
            except Exception:
                # Whatever refused it (a full disk, or a bug), the text must outlive this run.
                _log.exception("Reply %s could not be saved at close", writer.message_id)
                if writer.message.parent_id is not None:  # a summary answers none: written again
                    unsaved.append(_unsaved(writer))
        self._writers.clear()
        if unsaved:
            target = reply_recovery.recovery_path(self.path)
            try:
                reply_recovery.save(target, unsaved)
            except OSError as exc:
                _log.error("The unsaved replies could not be kept in %s: %s", target, exc)

    def _put_back_unsaved_replies(self) -> None:
        """Apply the recovery file left by a close that could not write some replies."""
        source = reply_recovery.recovery_path(self.path)
        try:
            replies = reply_recovery.load(source)
        except InvalidInputError as exc:
            self.recovery_report = f"{exc} The file was kept."
            return
        if not replies:
            return
        try:
            with self._write() as db:
                homeless = [r for r in replies if not _put_back(db, r)]
        except StoreError as exc:
            self.recovery_report = (
                f"Replies that could not be saved last time are still waiting in {source}: {exc}"
            )
            return
        try:
            reply_recovery.write(source, homeless)
        except OSError as exc:
            _log.warning("The applied recovery file %s could not be updated: %s", source, exc)
        restored = len(replies) - len(homeless)
        notes: list[str] = []
        if restored:
            notes.append(
                f"{_replies(restored)} that could not be saved last time were put back into "
                "their conversations."
            )
        if homeless:
            notes.append(
                f"{_replies(len(homeless))} that could not be saved answered messages that no "
                f"longer exist; their text was kept in {source}."
            )
        self.recovery_report = " ".join(notes)


def _replies(count: int) -> str:
    return "1 reply" if count == 1 else f"{count} replies"


def _unsaved(writer: ReplyWriter) -> UnsavedReply:
    message = writer.message
    status, stats, error = writer.final or ("interrupted", None, None)
    assert message.parent_id is not None, "a reply always answers a message"
    return UnsavedReply(
        message_id=message.id,
        conversation_id=message.conversation_id,
        parent_id=message.parent_id,
        content=writer.text,
        created_at=message.created_at,
        status=status,
        model_id=message.model_id,
        params=message.params,
        stats=stats or {},
        error=error,
        reasoning=writer.reasoning,
        tool_calls=writer.tool_calls,
        provenance=writer.provenance,
    )


def _put_back(db: sqlite3.Connection, reply: UnsavedReply) -> bool:
    """Write `reply` into its row, or re-create it under its parent; False when neither exists.
    Running it twice changes nothing more."""
    stats = json.dumps(reply.stats, ensure_ascii=False, sort_keys=True)
    calls = dump_tool_calls(reply.tool_calls)
    origin = dump_mapping(reply.provenance, "An unsaved reply's provenance")
    row = db.execute(
        "SELECT status FROM messages WHERE id = ? AND conversation_id = ? AND role = 'assistant'",
        (reply.message_id, reply.conversation_id),
    ).fetchone()
    if row is not None:
        # A row already finished holds this very text (put back before): leave it alone.
        if row[0] in ("streaming", "interrupted"):
            db.execute(
                "UPDATE messages SET content = ?, status = ?, stats = ?, error = ?, reasoning = ?,"
                " tool_calls = ?, provenance = ? WHERE id = ?",
                (
                    reply.content,
                    reply.status,
                    stats,
                    reply.error,
                    reply.reasoning,
                    calls,
                    origin,
                    reply.message_id,
                ),
            )
        return True
    parent = db.execute(
        "SELECT 1 FROM messages WHERE id = ? AND conversation_id = ?",
        (reply.parent_id, reply.conversation_id),
    ).fetchone()
    if parent is None:
        return False
    already = db.execute(
        "SELECT 1 FROM messages WHERE parent_id = ? AND role = 'assistant' AND content = ?"
        " AND created_at = ?",
        (reply.parent_id, reply.content, reply.created_at),
    ).fetchone()
    if already is not None:
        return True
    (new_id,) = db.execute(
        "INSERT INTO messages (conversation_id, parent_id, role, content, created_at, status,"
        " model_id, params, stats, error, reasoning, tool_calls, provenance)"
        " VALUES (?, ?, 'assistant', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (
            reply.conversation_id,
            reply.parent_id,
            reply.content,
            reply.created_at,
            reply.status,
            reply.model_id,
            json.dumps(reply.params, ensure_ascii=False, sort_keys=True),
            stats,
            reply.error,
            reply.reasoning,
            calls,
            origin,
        ),
    ).fetchone()
    # The parent was the active leaf: keep the active leaf a leaf, showing the reply.
    db.execute(
        "UPDATE conversations SET active_leaf_id = ? WHERE id = ? AND active_leaf_id = ?",
        (new_id, reply.conversation_id, reply.parent_id),
    )
    return True
