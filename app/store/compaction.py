"""Compacted branches in the message tree (the records are `app.store.compaction_records`').

A compacted branch hangs beside the conversation's first message, as a new root: the roots are
siblings, so `‹ n/m ›` on the first message steps between the full chat and each compacted
branch, and nothing of the full chat changes. Its summary streams like a reply (status
"streaming", written by a `ReplyWriter`); once written, the turns it keeps are copied below it
as new messages, each naming the one it copies, so the compacted branch is an ordinary path
(its own prompt, its own cache) and the full chat keeps its ids, its replies and its cache.

A summary abandoned (stopped, failed) goes with the copies below it, and the branch the
person was on becomes active again; a crash while it streams leaves it "interrupted" beside
the full chat, which is untouched.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from app.store.compaction_records import check_compaction, kept_ids, remap_compaction
from app.store.records import InvalidInputError, Message
from app.store.replies import StreamingReplies


class CompactedBranches(StreamingReplies):
    """The compaction operations of `Store`."""

    def begin_summary(
        self,
        conversation_id: int,
        record: dict[str, Any],
        model_id: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> Message:
        """An empty summary of the messages `record["covers"]` names (a path of this
        conversation), status "streaming", as a new root and the active leaf."""
        record = check_compaction(record, "The summary's record")
        covers: list[int] = record.get("covers") or []
        kept: list[int] = record.get("kept") or []
        if not covers:
            raise InvalidInputError("A summary needs the messages it summarises.")
        for message_id in (*covers, *kept):
            if self.get_message(message_id).conversation_id != conversation_id:
                raise InvalidInputError(
                    f"Message {message_id} belongs to another conversation than {conversation_id}."
                )
        summary = self._add_message(
            conversation_id, None, "summary", "", "streaming", model_id, params
        )
        return self.set_compaction(summary.id, record)

    def set_compaction(self, message_id: int, record: dict[str, Any]) -> Message:
        """Replace a message's compaction record (a summary's token count, once known)."""
        text = json.dumps(check_compaction(record, "The compaction record"), sort_keys=True)
        self.get_message(message_id)
        with self._write() as db:
            db.execute("UPDATE messages SET compaction = ? WHERE id = ?", (text, message_id))
        return self.get_message(message_id)

    def keep_turns(self, summary_id: int) -> Message:
        """Copy the turns a written summary keeps below it, in order; the last copy (or the
        summary, keeping none) becomes the active leaf and is returned."""
        summary = self.get_message(summary_id)
        kept = [self.get_message(i) for i in kept_ids(summary)]
        return self._copy_chain(summary.conversation_id, summary.id, kept)

    def graft(self, messages: Sequence[Message], onto_id: int) -> Message:
        """Copies of `messages` as a chain below `onto_id` (each naming the one it copies), the
        last made the active leaf and returned: a compacted branch's later turns asked of the
        full chat."""
        return self._copy_chain(self.get_message(onto_id).conversation_id, onto_id, messages)

    def edit_summary(self, summary_id: int, text: str) -> Message:
        """The person's own version of a summary: a sibling summary with `text`, the same
        record (marked edited) and copies of the same kept turns below it. Returns the new
        active leaf."""
        original = self.get_message(summary_id)
        if original.role != "summary":
            raise InvalidInputError(f"Message {summary_id} is not a summary.")
        edited = self._add_message(
            original.conversation_id,
            None,
            "summary",
            text,
            "complete",
            original.model_id,
            original.params,
        )
        self.set_compaction(edited.id, {**original.compaction, "edited": True})
        return self.keep_turns(edited.id)

    def abandon_summary(self, summary_id: int, back_to: int | None) -> Message | None:
        """Remove a summary that will not be finished (and anything below it), and show the
        branch through `back_to` again; returns the active leaf."""
        leaf = self.delete_message(summary_id)
        if back_to is None:
            return leaf
        return self.switch_to_sibling(back_to)

    def _copy_chain(
        self, conversation_id: int, parent_id: int, messages: Sequence[Message]
    ) -> Message:
        leaf_id = parent_id
        with self._write() as db:
            for m in messages:
                # What it says, word for word, and the model that wrote it; its stats and
                # provenance describe the original's prompt, so the copy has none.
                copy = replace(m, stats={}, provenance={}, compaction={"copy_of": m.id})
                status = "interrupted" if m.status == "streaming" else m.status
                leaf_id = self._insert_copy(db, conversation_id, leaf_id, copy, status, visit=0)
            self.activate_leaf(db, conversation_id, leaf_id)
            self._touch(db, conversation_id)
        return self.get_message(leaf_id)


def write_compaction(
    db: sqlite3.Connection, records: Iterable[tuple[int, dict[str, Any]]], ids: Mapping[Any, int]
) -> None:
    """Write each (message id, record) of an import, its ids mapped to the new ones by `ids`
    (inside the import's transaction, once every message is in)."""
    for message_id, record in records:
        text = json.dumps(remap_compaction(record, ids), ensure_ascii=False, sort_keys=True)
        db.execute("UPDATE messages SET compaction = ? WHERE id = ?", (text, message_id))
