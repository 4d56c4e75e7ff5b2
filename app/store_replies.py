"""The lifecycle of a streaming reply in the store: begun empty with status "streaming", grown
by a `ReplyWriter`, finished with a final status. A reply still streaming when the store closes is
finished as "interrupted"; one left streaming by a crash becomes "interrupted" at the next open,
keeping its text."""

from __future__ import annotations

import sqlite3
import weakref
from pathlib import Path
from typing import Any

from app.reply_writer import ReplyWriter
from app.store_models import (
    FINAL_STATUSES,
    InvalidInputError,
    Message,
    Status,
    check_optional_text,
    check_status,
    check_text,
    dump_mapping,
)
from app.store_tree import MessageTree


class StreamingReplies(MessageTree):
    """The reply operations of `Store`."""

    def __init__(self, conn: sqlite3.Connection, path: Path, recovered_from: Path | None) -> None:
        super().__init__(conn, path, recovered_from)
        self._writers: weakref.WeakSet[ReplyWriter] = weakref.WeakSet()

    def begin_reply(
        self,
        conversation_id: int,
        parent_id: int,
        model_id: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> Message:
        """An empty assistant message, status "streaming", as the new active leaf. Beginning a
        second reply under the same parent is how a reply is regenerated."""
        if parent_id is None:
            raise InvalidInputError("A reply needs the message it answers.")
        return self._add_message(
            conversation_id, parent_id, "assistant", "", "streaming", model_id, params
        )

    def reply_writer(self, message_id: int, interval_s: float = 1.0) -> ReplyWriter:
        """A buffer for a streaming reply's tokens; `close()` finishes it if nobody else did."""
        writer = ReplyWriter(self, self._streaming(message_id), interval_s=interval_s)
        self._writers.add(writer)
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
    ) -> Message:
        check_text(content, "The reply", allow_empty=True)
        check_text(reasoning, "The reply's reasoning", allow_empty=True)
        check_status(status, FINAL_STATUSES)
        stats_json = dump_mapping(stats, "The reply statistics")
        check_optional_text(error, "The error message")
        message = self._streaming(message_id)
        with self._write() as db:
            db.execute(
                "UPDATE messages SET content = ?, status = ?, stats = ?, error = ?, reasoning = ?"
                " WHERE id = ?",
                (content, status, stats_json, error, reasoning, message_id),
            )
            self._touch(db, message.conversation_id)
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

    def _interrupt_open_writers(self) -> None:
        for writer in list(self._writers):
            if not writer.done and self._still_streaming(writer.message_id):
                writer.finish("interrupted")
