"""The conversation store's connection to its SQLite file: transactions, SQLite's own errors as
`StoreError`, reading one conversation or message by id, and the images the messages name (kept
beside the database by `app.images`, collected once no message names them). The store's other parts
(`app.store.tree`, `app.store.replies`, `app.store.conversations`) build on this class."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Generator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any

from app.images.store import ImageError, ImageStore
from app.store.records import Conversation, Message, MessageFields, NotFoundError, StoreError

CONVERSATION_COLUMNS = (
    "id, title, created_at, updated_at, system_prompt, model_id, params, active_leaf_id, "
    "pinned, archived"
)
# The messages table names its columns as `Message` names its fields, in the same order
# (`message_from_row` reads a row by position).
MESSAGE_FIELDS = ("id", "conversation_id", "parent_id", *(f.name for f in fields(MessageFields)))
MESSAGE_COLUMNS = ", ".join(MESSAGE_FIELDS)
# Every image digest any message names, deleted conversations' included (an undo needs them).
_IMAGE_DIGESTS_SQL = (
    "SELECT DISTINCT json_extract(a.value, '$.sha256') FROM messages AS m,"
    " json_each(m.attachments) AS a"
    " WHERE m.attachments <> '[]' AND json_extract(a.value, '$.kind') = 'image'"
)
# Whether any of the messages whose ids are the JSON list `?` names an image.
NAMES_IMAGES_SQL = (
    "SELECT EXISTS (SELECT 1 FROM messages AS m, json_each(m.attachments) AS a"
    " WHERE m.id IN (SELECT value FROM json_each(?)) AND m.attachments <> '[]'"
    " AND json_extract(a.value, '$.kind') = 'image')"
)


class StoreRows:
    """Holds the open connection; `Store.open(path)` makes one."""

    def __init__(self, conn: sqlite3.Connection, path: Path, recovered_from: Path | None) -> None:
        self._conn: sqlite3.Connection | None = conn
        self.path = path
        # Set when the file at `path` was damaged: where it was moved (kept, for the person).
        self.recovered_from = recovered_from
        self.images = ImageStore(path.parent)  # the data folder is the database's folder

    def referenced_images(self) -> set[str]:
        """The digests of every image a message holds."""
        return {row[0] for row in self._all(_IMAGE_DIGESTS_SQL, ())}

    def collect_images(self) -> int:
        """Remove the kept images no message names any more (after a delete made final);
        returns how many. A failure leaves them for the next time: never an error for a
        delete that has already happened."""
        try:
            return self.images.remove_unreferenced(self.referenced_images())
        except (OSError, ImageError, StoreError):
            return 0

    def get_conversation(self, conversation_id: int) -> Conversation:
        row = self._one(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE id = ? AND deleted_at IS NULL",
            (conversation_id,),
        )
        if row is None:
            raise NotFoundError(f"There is no conversation with id {conversation_id!r}.")
        return conversation_from_row(row)

    def get_message(self, message_id: int) -> Message:
        row = self._one(f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?", (message_id,))
        if row is None:
            raise NotFoundError(f"There is no message with id {message_id!r}.")
        return message_from_row(row)

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError("The conversation store is closed.")
        return self._conn

    @contextmanager
    def _errors(self) -> Generator[None]:
        """SQLite's own errors (disk full, locked by another program) as StoreError."""
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"The conversation database could not be used: {exc}.") from exc

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """One write transaction for the history importers (app.importers.writer), which add
        a whole conversation at a time; committed on leaving, rolled back on any error."""
        return self._write()

    @contextmanager
    def _write(self) -> Generator[sqlite3.Connection]:
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


# Each column named, in the order CONVERSATION_COLUMNS and MESSAGE_FIELDS select them, so the
# type checker matches them to the fields; passed by position, since every message read is built
# here.
def conversation_from_row(row: tuple[Any, ...]) -> Conversation:
    conversation_id, title, created, updated, system, model_id, params, leaf, pinned, archived = row
    return Conversation(
        conversation_id,
        title,
        created,
        updated,
        system,
        model_id,
        _loads(params),
        leaf,
        bool(pinned),
        bool(archived),
    )


def message_from_row(row: tuple[Any, ...]) -> Message:
    (
        message_id,
        conversation_id,
        parent_id,
        role,
        content,
        created_at,
        status,
        model_id,
        params,
        stats,
        error,
        reasoning,
        attachments,
        trace,
        calls,
        call_id,
        tool_name,
        origin,
        compaction,
    ) = row
    loaded = () if attachments == "[]" else tuple(json.loads(attachments))
    tool_calls = () if calls == "[]" else tuple(json.loads(calls))
    return Message(
        message_id,
        conversation_id,
        parent_id,
        role=role,
        content=content,
        created_at=created_at,
        status=status,
        model_id=model_id,
        params=_loads(params),
        stats=_loads(stats),
        error=error,
        reasoning=reasoning,
        attachments=loaded,
        trace=trace,
        tool_calls=tool_calls,
        tool_call_id=call_id,
        tool_name=tool_name,
        provenance=_loads(origin),
        compaction=_loads(compaction),
    )


def _loads(text: str) -> dict[str, Any]:
    # Most user messages carry no params or stats; skipping the parser for them halves the
    # time to read a long conversation.
    return {} if text == "{}" else json.loads(text)
