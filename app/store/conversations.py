"""The conversation store: every conversation is a tree of messages in SQLite, and nothing a
person wrote or read is ever overwritten.

API (all calls on one thread, the GUI thread; every method that changes something is one
transaction; any failure raises `StoreError` with a message written for the person):

    store = Store.open(path)          # creates or migrates; store.recovered_from: Path | None;
                                      # puts back replies close could not write (recovery_report)
    store.close()                     # also finishes unfinished ReplyWriters as "interrupted"

    create_conversation(title=None, system_prompt="", model_id=None, params=None) -> Conversation
    get_conversation(id) -> Conversation
    list_conversations(include_archived=False) -> list[Conversation]   # pinned, then recent
    rename(id, title) / set_pinned(id, bool) / set_archived(id, bool) -> Conversation
    update_settings(id, *, system_prompt=, model_id=, params=) -> Conversation
    save_draft(id, text) / draft(id) -> str    # the composer's unsent text ("" = none)
    delete_conversation(id)           # undoable: restore_conversation(id) -> Conversation
    deleted_conversation_ids() -> list[int]    # deleted, still undoable
    purge_deleted(older_than_s=0.0) -> int     # makes deletions final; unnamed images go
    fork_conversation(message_id) -> Conversation  # root..message copied into a new one

    append_message(conversation_id, parent_id, role, content, status="complete",
                   model_id=None, params=None) -> Message       # becomes the active leaf
    edit_message(message_id, new_content, attachments=None) -> Message  # new sibling,
                                      # original kept; same attachments unless given
                                      # (knowledge excerpts never carried over)
    add_excerpts(message_id, records) -> Message  # a user message nothing answers yet
    begin_reply(conversation_id, parent_id, model_id=None, params=None) -> Message
                                      # "streaming", empty; regenerate = same parent again
    reply_writer(message_id) -> ReplyWriter    # .append(text), .flush(),
                                      # .finish(status, stats, error); writes <= once a second
    update_streaming(message_id, content)      # full text so far
    finish_reply(message_id, content, status="complete", stats=None, error=None) -> Message
    switch_to_sibling(message_id) -> Message   # the new active leaf
    delete_message(message_id) -> Message | None   # subtree gone; returns new active leaf

    begin_summary(conv_id, record, model_id=None, params=None) -> Message   # a compacted
                                      # branch's summary, "streaming", a new root (compaction)
    keep_turns(summary_id) / edit_summary(summary_id, text) / graft(messages, onto_id)
    abandon_summary(summary_id, back_to) / set_compaction(message_id, record)

    get_message(id) / children(id) / siblings(id) -> (list, index) / active_path(conv_id)
    all_messages(conv_id)             # the whole tree, parents first
    search(query, limit=50) -> list[SearchHit]  # plain typed text; hit.spans holds
                                      # (text, is_match) pieces; message_id None = title hit
    export_json(conv_id) -> dict / export_markdown(conv_id) -> str / import_json(data)

Errors: StoreError, and its kinds NotFoundError (an unknown id), InvalidInputError (empty
text, unknown role or status, malformed import) and NewerDatabaseError (file left untouched).

The active leaf is always a leaf (or None for an empty conversation). Switching to any message
makes the most recently visited leaf below it active; visits are counted per conversation, so
the order does not depend on the wall clock. Rows left "streaming" by a crash become
"interrupted" at open and keep their text.

The store is built in layers, each a module: `app.store.connection` (the connection, transactions,
lookups by id), `app.store.tree` (the message tree and its SQL), `app.store.replies` (the
streaming-reply lifecycle), `app.store.compaction` (compacted branches) and this one (opening
and closing, conversations, search, export and import).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import Any

from app.store import export as store_export
from app.store import search as store_search
from app.store.compaction import CompactedBranches, write_compaction
from app.store.connection import CONVERSATION_COLUMNS, conversation_from_row
from app.store.database_file import open_database
from app.store.export_images import image_records, images_json, keep_images
from app.store.records import (
    Conversation,
    InvalidInputError,
    Message,
    NewerDatabaseError,
    NotFoundError,
    SearchHit,
    StoreError,
    check_optional_text,
    check_text,
    dump_mapping,
)
from app.store.reply_writer import ReplyWriter

__all__ = [
    "DEFAULT_TITLE",
    "Conversation",
    "InvalidInputError",
    "Message",
    "NewerDatabaseError",
    "NotFoundError",
    "ReplyWriter",
    "SearchHit",
    "Store",
    "StoreError",
]

DEFAULT_TITLE = "New conversation"


class _Unset(Enum):
    """Marks an update_settings argument that was not given (None is a value: no model)."""

    UNSET = "unset"


UNSET = _Unset.UNSET


class Store(CompactedBranches):
    """Use `Store.open(path)`."""

    @classmethod
    def open(cls, path: str | Path) -> Store:
        path = Path(path)
        conn, recovered_from = open_database(path)
        store = cls(conn, path, recovered_from)
        try:
            store._put_back_unsaved_replies()
            store._interrupt_orphaned_replies()
        except BaseException:
            conn.close()
            raise
        return store

    @classmethod
    def open_another(cls, path: str | Path) -> Store:
        """One more connection to a database the app may have open: for another thread (a
        Store belongs to the thread that opened it) or a command beside a running app
        (`branchwise import`, `export`, `tools call`). It skips what only the app's own open
        may do: replies streaming now are the app's, not orphans to mark interrupted, and the
        recovery file is the app's to put back."""
        path = Path(path)
        conn, recovered_from = open_database(path)
        return cls(conn, path, recovered_from)

    def close(self) -> None:
        """Finish any reply still being written as "interrupted" (or with the status its failed
        final write was given), then close the file. A reply the database still refuses (a full
        disk) is kept in the recovery file, which the next `open` puts back."""
        if self._conn is None:
            return
        # No "PRAGMA optimize" here: the statistics it gathers make SQLite 3.40 add a Bloom
        # filter to the active-path query's recursive step, three times slower at 500 messages.
        try:
            self._settle_open_writers()
        finally:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- conversations -----------------------------------------------------------------------

    def create_conversation(
        self,
        title: str | None = None,
        system_prompt: str = "",
        model_id: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> Conversation:
        title = (
            DEFAULT_TITLE if title is None else check_text(title, "The title", allow_empty=False)
        )
        check_text(system_prompt, "The system prompt", allow_empty=True)
        check_optional_text(model_id, "The model id")
        params_json = dump_mapping(params, "The sampling parameters")
        now = time.time()
        with self._write() as db:
            (conversation_id,) = db.execute(
                "INSERT INTO conversations (title, created_at, updated_at, system_prompt,"
                " model_id, params) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (title, now, now, system_prompt, model_id, params_json),
            ).fetchone()
        return self.get_conversation(conversation_id)

    def list_conversations(self, include_archived: bool = False) -> list[Conversation]:
        rows = self._all(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE deleted_at IS NULL"
            " AND (? OR archived = 0) ORDER BY pinned DESC, updated_at DESC, id DESC",
            (bool(include_archived),),
        )
        return [conversation_from_row(row) for row in rows]

    def rename(self, conversation_id: int, title: str) -> Conversation:
        check_text(title, "The title", allow_empty=False)
        return self._set_column(conversation_id, "title", title)

    def set_pinned(self, conversation_id: int, pinned: bool) -> Conversation:
        return self._set_column(conversation_id, "pinned", bool(pinned))

    def set_archived(self, conversation_id: int, archived: bool) -> Conversation:
        return self._set_column(conversation_id, "archived", bool(archived))

    def update_settings(
        self,
        conversation_id: int,
        *,
        system_prompt: str | _Unset = UNSET,
        model_id: str | _Unset | None = UNSET,
        params: dict[str, Any] | _Unset = UNSET,
    ) -> Conversation:
        changes: dict[str, object] = {}
        if system_prompt is not UNSET:
            changes["system_prompt"] = check_text(
                system_prompt, "The system prompt", allow_empty=True
            )
        if model_id is not UNSET:
            changes["model_id"] = check_optional_text(model_id, "The model id")
        if params is not UNSET:
            changes["params"] = dump_mapping(params, "The sampling parameters")
        conversation = self.get_conversation(conversation_id)
        with self._write() as db:
            for column, value in changes.items():
                db.execute(
                    f"UPDATE conversations SET {column} = ? WHERE id = ?", (value, conversation.id)
                )
        return self.get_conversation(conversation_id)

    def save_draft(self, conversation_id: int, text: str) -> None:
        """Keep the composer's unsent text ("" clears it). A deleted conversation keeps its
        draft for an undo; the conversation's place in the list does not change."""
        check_text(text, "The draft", allow_empty=True)
        with self._write() as db:
            saved = db.execute(
                "UPDATE conversations SET draft = ? WHERE id = ?", (text, conversation_id)
            ).rowcount
        if not saved:
            raise NotFoundError(f"There is no conversation with id {conversation_id!r}.")

    def draft(self, conversation_id: int) -> str:
        row = self._one(
            "SELECT draft FROM conversations WHERE id = ? AND deleted_at IS NULL",
            (conversation_id,),
        )
        if row is None:
            raise NotFoundError(f"There is no conversation with id {conversation_id!r}.")
        return str(row[0])

    def delete_conversation(self, conversation_id: int) -> None:
        """Hide the conversation (and its messages from search) until `restore_conversation`
        or `purge_deleted`."""
        self.get_conversation(conversation_id)
        with self._write() as db:
            db.execute(
                "UPDATE conversations SET deleted_at = ? WHERE id = ?",
                (time.time(), conversation_id),
            )

    def restore_conversation(self, conversation_id: int) -> Conversation:
        with self._write() as db:
            restored = db.execute(
                "UPDATE conversations SET deleted_at = NULL"
                " WHERE id = ? AND deleted_at IS NOT NULL",
                (conversation_id,),
            ).rowcount
        if not restored:
            raise NotFoundError(f"There is no deleted conversation with id {conversation_id!r}.")
        return self.get_conversation(conversation_id)

    def deleted_conversation_ids(self) -> list[int]:
        """The conversations deleted and not yet purged (an undo can still bring them back)."""
        rows = self._all("SELECT id FROM conversations WHERE deleted_at IS NOT NULL", ())
        return [row[0] for row in rows]

    def purge_deleted(self, older_than_s: float = 0.0) -> int:
        """Remove for good the conversations deleted at least `older_than_s` seconds ago;
        returns how many."""
        with self._write() as db:
            purged = db.execute(
                "DELETE FROM conversations WHERE deleted_at <= ?", (time.time() - older_than_s,)
            ).rowcount
        self.collect_images()  # also images attached and never sent, once their grace is over
        return purged

    def fork_conversation(self, message_id: int) -> Conversation:
        """A new conversation holding copies of the path from the root to `message_id`, with
        the same settings; the original is untouched."""
        path = self._path_to(message_id)
        source = self._conversation_row_any(path[-1].conversation_id)
        now = time.time()
        with self._write() as db:
            (new_id,) = db.execute(
                "INSERT INTO conversations (title, created_at, updated_at, system_prompt,"
                " model_id, params) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (
                    f"{source.title} (fork)",
                    now,
                    now,
                    source.system_prompt,
                    source.model_id,
                    dump_mapping(source.params, "The sampling parameters"),
                ),
            ).fetchone()
            parent_id = None
            for message in path:
                status = "interrupted" if message.status == "streaming" else message.status
                parent_id = self._insert_copy(db, new_id, parent_id, message, status, visit=0)
            assert parent_id is not None
            self.activate_leaf(db, new_id, parent_id)
        return self.get_conversation(new_id)

    # --- search, export, import --------------------------------------------------------------

    def search(self, query: str, limit: int = 50) -> list[SearchHit]:
        with self._errors():
            return store_search.search(self._db(), query, limit)

    def export_json(self, conversation_id: int) -> dict[str, Any]:
        conversation = self.get_conversation(conversation_id)
        visits = dict(
            self._all(
                "SELECT id, visit FROM messages WHERE conversation_id = ?", (conversation_id,)
            )
        )
        messages = self.all_messages(conversation_id)
        record = store_export.to_json(conversation, messages, visits)
        named = image_records(m.attachments for m in messages)
        record["images"] = images_json(named, self.images)  # bytes in the file, never in SQLite
        return record

    def export_markdown(
        self, conversation_id: int, model_names: Mapping[str, str] | None = None
    ) -> str:
        """The branch on screen as Markdown; `model_names` maps model ids to readable names."""
        return store_export.to_markdown(
            self.get_conversation(conversation_id), self.active_path(conversation_id), model_names
        )

    def import_json(self, data: object) -> Conversation:
        """A new conversation from `export_json` output (new ids), its images kept in the image
        store; nothing is written to the database unless all of it is valid."""
        record = store_export.from_json(data)
        named = image_records(m.attachments for m in record.messages)
        keep_images(self.images, record.images, named)
        with self._write() as db:
            (new_id,) = db.execute(
                "INSERT INTO conversations (title, created_at, updated_at, system_prompt,"
                " model_id, params, pinned, archived, visit_clock)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (
                    record.title,
                    record.created_at,
                    record.updated_at,
                    record.system_prompt,
                    record.model_id,
                    dump_mapping(record.params, "conversation.params"),
                    record.pinned,
                    record.archived,
                    max((m.visit for m in record.messages), default=0),
                ),
            ).fetchone()
            new_ids: dict[int, int] = {}
            for m in record.messages:
                parent = None if m.parent_id is None else new_ids[m.parent_id]
                new_ids[m.id] = self._insert_copy(db, new_id, parent, m, m.status, m.visit)
            # A summary names messages that are not its parents: mapped once all are in.
            compacted = [(new_ids[m.id], m.compaction) for m in record.messages if m.compaction]
            write_compaction(db, compacted, new_ids)
            # The file's active leaf, or the leaf last visited below it (a hand-edited file may
            # name an inner message); the visit counts come from the file as they are.
            leaf_id = (
                self.latest_leaf_in(db, new_id)
                if record.active_leaf_id is None
                else self._latest_leaf_under(db, new_ids[record.active_leaf_id])
            )
            db.execute(
                "UPDATE conversations SET active_leaf_id = ? WHERE id = ?", (leaf_id, new_id)
            )
        return self.get_conversation(new_id)

    # --- internals ---------------------------------------------------------------------------
    def _set_column(self, conversation_id: int, column: str, value: object) -> Conversation:
        conversation = self.get_conversation(conversation_id)
        with self._write() as db:
            db.execute(
                f"UPDATE conversations SET {column} = ? WHERE id = ?", (value, conversation.id)
            )
        return self.get_conversation(conversation_id)

    def _conversation_row_any(self, conversation_id: int) -> Conversation:
        """Also a deleted conversation: message ids stay usable until a purge."""
        row = self._one(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE id = ?", (conversation_id,)
        )
        assert row is not None, "messages.conversation_id is a foreign key"
        return conversation_from_row(row)
