"""The conversation store: every conversation is a tree of messages in SQLite, and nothing a
person wrote or read is ever overwritten (DESIGN.md section 3).

API (all calls on one thread, the GUI thread; every method that changes something is one
transaction; any failure raises `StoreError` with a message written for the person):

    store = Store.open(path)          # creates or migrates; store.recovered_from: Path | None
    store.close()                     # also finishes unfinished ReplyWriters as "interrupted"

    create_conversation(title=None, system_prompt="", model_id=None, params=None) -> Conversation
    get_conversation(id) -> Conversation
    list_conversations(include_archived=False) -> list[Conversation]   # pinned, then recent
    rename(id, title) / set_pinned(id, bool) / set_archived(id, bool) -> Conversation
    update_settings(id, *, system_prompt=, model_id=, params=) -> Conversation
    delete_conversation(id)           # undoable: restore_conversation(id) -> Conversation
    purge_deleted(older_than_s=0.0) -> int     # makes deletions final
    fork_conversation(message_id) -> Conversation  # root..message copied into a new one

    append_message(conversation_id, parent_id, role, content, status="complete",
                   model_id=None, params=None) -> Message       # becomes the active leaf
    edit_message(message_id, new_content) -> Message  # new sibling, original kept
    begin_reply(conversation_id, parent_id, model_id=None, params=None) -> Message
                                      # "streaming", empty; regenerate = same parent again
    reply_writer(message_id) -> ReplyWriter    # .append(text), .flush(),
                                      # .finish(status, stats, error); writes <= once a second
    update_streaming(message_id, content)      # full text so far
    finish_reply(message_id, content, status="complete", stats=None, error=None) -> Message
    switch_to_sibling(message_id) -> Message   # the new active leaf
    delete_message(message_id) -> Message | None   # subtree gone; returns new active leaf

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
"""

from __future__ import annotations

import json
import sqlite3
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Any

from app import store_export, store_search
from app.reply_writer import ReplyWriter
from app.store_file import open_database
from app.store_models import (
    FINAL_STATUSES,
    Conversation,
    InvalidInputError,
    Message,
    NewerDatabaseError,
    NotFoundError,
    Role,
    SearchHit,
    Status,
    StoreError,
    check_optional_text,
    check_role,
    check_status,
    check_text,
    dump_mapping,
)

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
_CONVERSATION_COLUMNS = (
    "id, title, created_at, updated_at, system_prompt, model_id, params, active_leaf_id, "
    "pinned, archived"
)
_MESSAGE_FIELDS = (
    "id",
    "conversation_id",
    "parent_id",
    "role",
    "content",
    "created_at",
    "status",
    "model_id",
    "params",
    "stats",
    "error",
)
_MESSAGE_COLUMNS = ", ".join(_MESSAGE_FIELDS)
_M_COLUMNS = ", ".join(f"m.{name}" for name in _MESSAGE_FIELDS)


class _Unset(Enum):
    """Marks an update_settings argument that was not given (None is a value: no model)."""

    UNSET = "unset"


UNSET = _Unset.UNSET


class Store:
    """Use `Store.open(path)`."""

    def __init__(self, conn: sqlite3.Connection, path: Path, recovered_from: Path | None) -> None:
        self._conn: sqlite3.Connection | None = conn
        self.path = path
        # Set when the file at `path` was damaged: where it was moved (kept, for the person).
        self.recovered_from = recovered_from
        self._writers: weakref.WeakSet[ReplyWriter] = weakref.WeakSet()

    @classmethod
    def open(cls, path: str | Path) -> Store:
        path = Path(path)
        conn, recovered_from = open_database(path)
        store = cls(conn, path, recovered_from)
        try:
            with store._write() as db:
                # Nobody streams into these any more: the app that did stopped without saying.
                db.execute("UPDATE messages SET status = 'interrupted' WHERE status = 'streaming'")
        except BaseException:
            conn.close()
            raise
        return store

    def close(self) -> None:
        """Finish any reply still being written as "interrupted", then close the file (even
        if that finishing fails, e.g. on a full disk: the reply is then marked at next open)."""
        if self._conn is None:
            return
        # No "PRAGMA optimize" here: the statistics it gathers make SQLite 3.40 add a Bloom
        # filter to the active-path query's recursive step, three times slower at 500 messages.
        try:
            for writer in list(self._writers):
                if not writer.done and self._still_streaming(writer.message_id):
                    writer.finish("interrupted")
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

    def get_conversation(self, conversation_id: int) -> Conversation:
        row = self._one(
            f"SELECT {_CONVERSATION_COLUMNS} FROM conversations"
            " WHERE id = ? AND deleted_at IS NULL",
            (conversation_id,),
        )
        if row is None:
            raise NotFoundError(f"There is no conversation with id {conversation_id!r}.")
        return _conversation(row)

    def list_conversations(self, include_archived: bool = False) -> list[Conversation]:
        rows = self._all(
            f"SELECT {_CONVERSATION_COLUMNS} FROM conversations WHERE deleted_at IS NULL"
            " AND (? OR archived = 0) ORDER BY pinned DESC, updated_at DESC, id DESC",
            (bool(include_archived),),
        )
        return [_conversation(row) for row in rows]

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

    def purge_deleted(self, older_than_s: float = 0.0) -> int:
        """Remove for good the conversations deleted at least `older_than_s` seconds ago;
        returns how many."""
        with self._write() as db:
            return db.execute(
                "DELETE FROM conversations WHERE deleted_at <= ?", (time.time() - older_than_s,)
            ).rowcount

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
            self._activate(db, new_id, parent_id)
        return self.get_conversation(new_id)

    # --- messages ----------------------------------------------------------------------------

    def append_message(
        self,
        conversation_id: int,
        parent_id: int | None,
        role: Role,
        content: str,
        status: Status = "complete",
        model_id: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> Message:
        check_text(content, "The message", allow_empty=False)
        return self._add_message(
            conversation_id,
            parent_id,
            check_role(role),
            content,
            check_status(status),
            model_id,
            params,
        )

    def edit_message(self, message_id: int, new_content: str) -> Message:
        """A new sibling of `message_id` with the new text, made active; the original stays."""
        check_text(new_content, "The message", allow_empty=False)
        original = self.get_message(message_id)
        return self._add_message(
            original.conversation_id,
            original.parent_id,
            original.role,
            new_content,
            "complete",
            original.model_id,
            original.params,
        )

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

    def update_streaming(self, message_id: int, content: str) -> None:
        check_text(content, "The reply", allow_empty=True)
        with self._write() as db:
            updated = db.execute(
                "UPDATE messages SET content = ? WHERE id = ? AND status = 'streaming'",
                (content, message_id),
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
    ) -> Message:
        check_text(content, "The reply", allow_empty=True)
        check_status(status, FINAL_STATUSES)
        stats_json = dump_mapping(stats, "The reply statistics")
        check_optional_text(error, "The error message")
        message = self._streaming(message_id)
        with self._write() as db:
            db.execute(
                "UPDATE messages SET content = ?, status = ?, stats = ?, error = ? WHERE id = ?",
                (content, status, stats_json, error, message_id),
            )
            self._touch(db, message.conversation_id)
        return self.get_message(message_id)

    def switch_to_sibling(self, message_id: int) -> Message:
        """Show the branch through `message_id`: its most recently visited leaf becomes active
        and is returned."""
        message = self.get_message(message_id)
        with self._write() as db:
            leaf_id = self._latest_leaf_under(db, message.id)
            self._activate(db, message.conversation_id, leaf_id)
        return self.get_message(leaf_id)

    def delete_message(self, message_id: int) -> Message | None:
        """Delete the message and everything below it. If the active leaf was among them, the
        parent's most recently visited remaining branch (or the parent itself) becomes active;
        returns the active leaf afterwards."""
        message = self.get_message(message_id)
        conversation_id = message.conversation_id
        with self._write() as db:
            doomed = [row[0] for row in db.execute(_SUBTREE_SQL, (message_id,))]
            (active_id,) = db.execute(
                "SELECT active_leaf_id FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
            db.execute(
                "DELETE FROM messages WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps(doomed),),
            )
            if active_id in doomed or active_id is None:
                active_id = (
                    self._latest_leaf_in(db, conversation_id)
                    if message.parent_id is None
                    else self._latest_leaf_under(db, message.parent_id)
                )
                if active_id is not None:
                    self._activate(db, conversation_id, active_id)
            self._touch(db, conversation_id)
        return None if active_id is None else self.get_message(active_id)

    def get_message(self, message_id: int) -> Message:
        row = self._one(f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE id = ?", (message_id,))
        if row is None:
            raise NotFoundError(f"There is no message with id {message_id!r}.")
        return _message(row)

    def children(self, message_id: int) -> list[Message]:
        self.get_message(message_id)
        rows = self._all(
            f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE parent_id = ? ORDER BY id",
            (message_id,),
        )
        return [_message(row) for row in rows]

    def siblings(self, message_id: int) -> tuple[list[Message], int]:
        """The message and its siblings, oldest first, and its position among them (0-based;
        the UI shows `index + 1 / len`)."""
        message = self.get_message(message_id)
        if message.parent_id is None:
            rows = self._all(
                f"SELECT {_MESSAGE_COLUMNS} FROM messages"
                " WHERE conversation_id = ? AND parent_id IS NULL ORDER BY id",
                (message.conversation_id,),
            )
            siblings = [_message(row) for row in rows]
        else:
            siblings = self.children(message.parent_id)
        return siblings, [m.id for m in siblings].index(message_id)

    def active_path(self, conversation_id: int) -> list[Message]:
        """Root first, active leaf last; empty for a conversation without messages."""
        leaf_id = self.get_conversation(conversation_id).active_leaf_id
        return [] if leaf_id is None else self._path_to(leaf_id)

    def all_messages(self, conversation_id: int) -> list[Message]:
        self.get_conversation(conversation_id)
        rows = self._all(
            f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ? ORDER BY id",
            (conversation_id,),
        )
        return [_message(row) for row in rows]

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
        return store_export.to_json(conversation, self.all_messages(conversation_id), visits)

    def export_markdown(self, conversation_id: int) -> str:
        return store_export.to_markdown(
            self.get_conversation(conversation_id), self.active_path(conversation_id)
        )

    def import_json(self, data: object) -> Conversation:
        """A new conversation from `export_json` output (new ids); nothing is written unless
        all of it is valid."""
        record = store_export.from_json(data)
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
            # The file's active leaf, or the leaf last visited below it (a hand-edited file may
            # name an inner message); the visit counts come from the file as they are.
            leaf_id = (
                self._latest_leaf_in(db, new_id)
                if record.active_leaf_id is None
                else self._latest_leaf_under(db, new_ids[record.active_leaf_id])
            )
            db.execute(
                "UPDATE conversations SET active_leaf_id = ? WHERE id = ?", (leaf_id, new_id)
            )
        return self.get_conversation(new_id)

    # --- internals ---------------------------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError("The conversation store is closed.")
        return self._conn

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """SQLite's own errors (disk full, locked by another program) as StoreError."""
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"The conversation database could not be used: {exc}.") from exc

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        db = self._db()
        with self._errors():
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

    def _one(self, sql: str, args: tuple[object, ...]) -> tuple[Any, ...] | None:
        with self._errors():
            return self._db().execute(sql, args).fetchone()

    def _all(self, sql: str, args: tuple[object, ...]) -> list[tuple[Any, ...]]:
        with self._errors():
            return self._db().execute(sql, args).fetchall()

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
            f"SELECT {_CONVERSATION_COLUMNS} FROM conversations WHERE id = ?", (conversation_id,)
        )
        assert row is not None, "messages.conversation_id is a foreign key"
        return _conversation(row)

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

    def _add_message(
        self,
        conversation_id: int,
        parent_id: int | None,
        role: str,
        content: str,
        status: str,
        model_id: str | None,
        params: dict[str, Any] | None,
    ) -> Message:
        check_optional_text(model_id, "The model id")
        params_json = dump_mapping(params, "The sampling parameters")
        conversation = self.get_conversation(conversation_id)
        if parent_id is not None and self.get_message(parent_id).conversation_id != conversation.id:
            raise InvalidInputError(
                f"Message {parent_id} belongs to another conversation than {conversation_id}."
            )
        with self._write() as db:
            (message_id,) = db.execute(
                "INSERT INTO messages (conversation_id, parent_id, role, content, created_at,"
                " status, model_id, params) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (
                    conversation_id,
                    parent_id,
                    role,
                    content,
                    time.time(),
                    status,
                    model_id,
                    params_json,
                ),
            ).fetchone()
            self._activate(db, conversation_id, message_id)
            self._touch(db, conversation_id)
        return self.get_message(message_id)

    @staticmethod
    def _insert_copy(
        db: sqlite3.Connection,
        conversation_id: int,
        parent_id: int | None,
        message: Message | store_export.MessageRecord,
        status: str,
        visit: int,
    ) -> int:
        (new_id,) = db.execute(
            "INSERT INTO messages (conversation_id, parent_id, role, content, created_at, status,"
            " model_id, params, stats, error, visit) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " RETURNING id",
            (
                conversation_id,
                parent_id,
                message.role,
                message.content,
                message.created_at,
                status,
                message.model_id,
                # Already checked: by from_json for an import, on the way in for a fork.
                json.dumps(message.params, ensure_ascii=False, sort_keys=True),
                json.dumps(message.stats, ensure_ascii=False, sort_keys=True),
                message.error,
                visit,
            ),
        ).fetchone()
        return int(new_id)

    @staticmethod
    def _activate(db: sqlite3.Connection, conversation_id: int, leaf_id: int) -> None:
        (visit,) = db.execute(
            "UPDATE conversations SET active_leaf_id = ?, visit_clock = visit_clock + 1"
            " WHERE id = ? RETURNING visit_clock",
            (leaf_id, conversation_id),
        ).fetchone()
        db.execute("UPDATE messages SET visit = ? WHERE id = ?", (visit, leaf_id))

    @staticmethod
    def _touch(db: sqlite3.Connection, conversation_id: int) -> None:
        db.execute(
            "UPDATE conversations SET updated_at = ? WHERE id = ?", (time.time(), conversation_id)
        )

    @staticmethod
    def _latest_leaf_under(db: sqlite3.Connection, root_id: int) -> int:
        """The most recently visited leaf below `root_id` (itself if it has no children)."""
        (leaf_id,) = db.execute(
            f"SELECT s.id FROM ({_SUBTREE_SQL}) AS s JOIN messages AS m ON m.id = s.id"
            " WHERE NOT EXISTS (SELECT 1 FROM messages AS c WHERE c.parent_id = s.id)"
            " ORDER BY m.visit DESC, m.id DESC LIMIT 1",
            (root_id,),
        ).fetchone()
        return int(leaf_id)

    @staticmethod
    def _latest_leaf_in(db: sqlite3.Connection, conversation_id: int) -> int | None:
        """The most recently visited leaf of the whole conversation; None when it is empty."""
        row = db.execute(
            "SELECT id FROM messages AS m WHERE conversation_id = ? AND NOT EXISTS"
            " (SELECT 1 FROM messages AS c WHERE c.parent_id = m.id)"
            " ORDER BY visit DESC, id DESC LIMIT 1",
            (conversation_id,),
        ).fetchone()
        return None if row is None else int(row[0])

    def _path_to(self, message_id: int) -> list[Message]:
        rows = self._all(
            "WITH RECURSIVE path(id, depth) AS (SELECT ?, 0 UNION ALL"
            " SELECT m.parent_id, p.depth + 1 FROM messages AS m JOIN path AS p ON m.id = p.id"
            " WHERE m.parent_id IS NOT NULL)"
            f" SELECT {_M_COLUMNS} FROM path AS p JOIN messages AS m ON m.id = p.id"
            " ORDER BY p.depth DESC",
            (message_id,),
        )
        if not rows:
            raise NotFoundError(f"There is no message with id {message_id!r}.")
        return [_message(row) for row in rows]


_SUBTREE_SQL = (
    "WITH RECURSIVE subtree(id) AS (SELECT ? UNION ALL"
    " SELECT m.id FROM messages AS m JOIN subtree AS s ON m.parent_id = s.id)"
    " SELECT id FROM subtree"
)


def _conversation(row: tuple[Any, ...]) -> Conversation:
    *head, params, active_leaf_id, pinned, archived = row
    return Conversation(*head, _loads(params), active_leaf_id, bool(pinned), bool(archived))


def _message(row: tuple[Any, ...]) -> Message:
    *head, params, stats, error = row
    return Message(*head, _loads(params), _loads(stats), error)


def _loads(text: str) -> dict[str, Any]:
    # Most user messages carry no params or stats; skipping the parser for them halves the
    # time to read a long conversation.
    return {} if text == "{}" else json.loads(text)
