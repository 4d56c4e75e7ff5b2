"""The message tree of a conversation and its SQL: adding, editing and deleting messages,
switching branches, and walking the tree. The active leaf is always a leaf (or None for an empty
conversation); switching to any message makes the most recently visited leaf below it active.
Visits are counted per conversation, so that order does not depend on the wall clock."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from app.images.store import is_image_record
from app.knowledge.excerpts import is_excerpt_record
from app.store.connection import (
    MESSAGE_COLUMNS,
    MESSAGE_FIELDS,
    NAMES_IMAGES_SQL,
    StoreRows,
    message_from_row,
)
from app.store.records import (
    InvalidInputError,
    Message,
    MessageFields,
    NotFoundError,
    Role,
    Status,
    check_optional_text,
    check_role,
    check_status,
    check_text,
    dump_attachments,
    dump_mapping,
    dump_tool_calls,
)

_M_COLUMNS = ", ".join(f"m.{name}" for name in MESSAGE_FIELDS)
_SUBTREE_SQL = (
    "WITH RECURSIVE subtree(id) AS (SELECT ? UNION ALL"
    " SELECT m.id FROM messages AS m JOIN subtree AS s ON m.parent_id = s.id)"
    " SELECT id FROM subtree"
)


class MessageTree(StoreRows):
    """The message operations of `Store`."""

    def append_message(
        self,
        conversation_id: int,
        parent_id: int | None,
        role: Role,
        content: str,
        status: Status = "complete",
        model_id: str | None = None,
        params: dict[str, Any] | None = None,
        attachments: list[dict[str, Any]] | None = None,
    ) -> Message:
        """`attachments`: files attached to the message, {"name", "size", "tokens", "text"}
        each (their text is kept here, so the files are never read again)."""
        # A picture alone is a message: "what is this?" is often all it needs.
        check_text(content, "The message", allow_empty=holds_image(attachments))
        return self._add_message(
            conversation_id,
            parent_id,
            check_role(role),
            content,
            check_status(status),
            model_id,
            params,
            attachments,
        )

    def edit_message(
        self,
        message_id: int,
        new_content: str,
        attachments: list[dict[str, Any]] | None = None,
    ) -> Message:
        """A new sibling of `message_id` with the new text and the same attached files and
        images (or `attachments` in their place), the same reply's tool calls or tool result's
        call, made active; the original stays. An edited tool result is marked so in its stats.
        Knowledge excerpts stay with the original: a new version retrieves its own."""
        original = self.get_message(message_id)
        given = original.attachments if attachments is None else attachments
        kept = [item for item in given if not is_excerpt_record(item)]
        check_text(
            new_content, "The message", allow_empty=original.role == "tool" or holds_image(kept)
        )
        return self._add_message(
            original.conversation_id,
            original.parent_id,
            original.role,
            new_content,
            "complete",
            original.model_id,
            original.params,
            kept,
            tool_calls=list(original.tool_calls),
            tool_call_id=original.tool_call_id,
            tool_name=original.tool_name,
            stats=_edited_stats(original, new_content) if original.role == "tool" else None,
            reasoning=original.reasoning if original.role == "assistant" else "",
        )

    def add_excerpts(self, message_id: int, excerpts: list[dict[str, Any]]) -> Message:
        """Keep the knowledge excerpts retrieved for a user message (`Excerpt.as_record` each)
        after its files and images. Only a message nothing answers yet and that has none: a
        turn a reply has read is never rewritten (InvalidInputError says so)."""
        message = self.get_message(message_id)
        if message.role != "user":
            raise InvalidInputError("Knowledge excerpts belong to a message of the person's.")
        if any(is_excerpt_record(item) for item in message.attachments):
            raise InvalidInputError("This message has its knowledge excerpts already.")
        kept = dump_attachments([*message.attachments, *excerpts])
        with self._write() as db:
            changed = db.execute(
                "UPDATE messages SET attachments = ? WHERE id = ?"
                " AND NOT EXISTS (SELECT 1 FROM messages WHERE parent_id = ?)",
                (kept, message_id, message_id),
            ).rowcount
        if not changed:
            raise InvalidInputError("This message has been answered: its turn stays as it was.")
        return self.get_message(message_id)

    def switch_to_sibling(self, message_id: int) -> Message:
        """Show the branch through `message_id`: its most recently visited leaf becomes active
        and is returned."""
        message = self.get_message(message_id)
        with self._write() as db:
            leaf_id = self._latest_leaf_under(db, message.id)
            self.activate_leaf(db, message.conversation_id, leaf_id)
        return self.get_message(leaf_id)

    def delete_message(self, message_id: int) -> Message | None:
        """Delete the message and everything below it. If the active leaf was among them, the
        parent's most recently visited remaining branch (or the parent itself) becomes active;
        returns the active leaf afterwards."""
        message = self.get_message(message_id)
        conversation_id = message.conversation_id
        with self._write() as db:
            doomed = [row[0] for row in db.execute(_SUBTREE_SQL, (message_id,))]
            # Only then is the image store walked: deleting in a text-only chat costs nothing.
            (had_images,) = db.execute(NAMES_IMAGES_SQL, (json.dumps(doomed),)).fetchone()
            (active_id,) = db.execute(
                "SELECT active_leaf_id FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
            db.execute(
                "DELETE FROM messages WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps(doomed),),
            )
            if active_id in doomed or active_id is None:
                active_id = (
                    self.latest_leaf_in(db, conversation_id)
                    if message.parent_id is None
                    else self._latest_leaf_under(db, message.parent_id)
                )
                if active_id is not None:
                    self.activate_leaf(db, conversation_id, active_id)
            self._touch(db, conversation_id)
        if had_images:
            self.collect_images()
        return None if active_id is None else self.get_message(active_id)

    def children(self, message_id: int) -> list[Message]:
        self.get_message(message_id)
        rows = self._all(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE parent_id = ? ORDER BY id",
            (message_id,),
        )
        return [message_from_row(row) for row in rows]

    def siblings(self, message_id: int) -> tuple[list[Message], int]:
        """The message and its siblings, oldest first, and its position among them (0-based;
        the UI shows `index + 1 / len`)."""
        message = self.get_message(message_id)
        if message.parent_id is None:
            rows = self._all(
                f"SELECT {MESSAGE_COLUMNS} FROM messages"
                " WHERE conversation_id = ? AND parent_id IS NULL ORDER BY id",
                (message.conversation_id,),
            )
            siblings = [message_from_row(row) for row in rows]
        else:
            siblings = self.children(message.parent_id)
        return siblings, [m.id for m in siblings].index(message_id)

    def active_path(self, conversation_id: int) -> list[Message]:
        """Root first, active leaf last; empty for a conversation without messages."""
        leaf_id = self.get_conversation(conversation_id).active_leaf_id
        return [] if leaf_id is None else self._path_to(leaf_id)

    def path_to(self, message_id: int) -> list[Message]:
        """Root first, `message_id` last: the branch through it, wherever the active leaf is."""
        return self._path_to(message_id)

    def all_messages(self, conversation_id: int) -> list[Message]:
        self.get_conversation(conversation_id)
        rows = self._all(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ? ORDER BY id",
            (conversation_id,),
        )
        return [message_from_row(row) for row in rows]

    def _add_message(
        self,
        conversation_id: int,
        parent_id: int | None,
        role: str,
        content: str,
        status: str,
        model_id: str | None,
        params: dict[str, Any] | None,
        attachments: list[dict[str, Any]] | None = None,
        *,
        tool_calls: list[dict[str, Any]] | None = None,
        tool_call_id: str | None = None,
        tool_name: str | None = None,
        stats: dict[str, Any] | None = None,
        reasoning: str = "",
        error: str | None = None,
    ) -> Message:
        check_optional_text(model_id, "The model id")
        check_optional_text(error, "The error message")
        params_json = dump_mapping(params, "The sampling parameters")
        attachments_json = dump_attachments(attachments)
        calls_json = dump_tool_calls(tool_calls)
        stats_json = dump_mapping(stats, "The message statistics")
        check_optional_text(tool_call_id, "The tool call id")
        check_optional_text(tool_name, "The tool name")
        conversation = self.get_conversation(conversation_id)
        if parent_id is not None and self.get_message(parent_id).conversation_id != conversation.id:
            raise InvalidInputError(
                f"Message {parent_id} belongs to another conversation than {conversation_id}."
            )
        with self._write() as db:
            (message_id,) = db.execute(
                "INSERT INTO messages (conversation_id, parent_id, role, content, created_at,"
                " status, model_id, params, attachments, tool_calls, tool_call_id, tool_name,"
                " stats, reasoning, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " RETURNING id",
                (
                    conversation_id,
                    parent_id,
                    role,
                    content,
                    time.time(),
                    status,
                    model_id,
                    params_json,
                    attachments_json,
                    calls_json,
                    tool_call_id,
                    tool_name,
                    stats_json,
                    reasoning,
                    error,
                ),
            ).fetchone()
            self.activate_leaf(db, conversation_id, message_id)
            self._touch(db, conversation_id)
        return self.get_message(message_id)

    @staticmethod
    def _insert_copy(
        db: sqlite3.Connection,
        conversation_id: int,
        parent_id: int | None,
        message: MessageFields,
        status: str,
        visit: int,
    ) -> int:
        (new_id,) = db.execute(
            "INSERT INTO messages (conversation_id, parent_id, role, content, created_at, status,"
            " model_id, params, stats, error, visit, reasoning, attachments, trace, tool_calls,"
            " tool_call_id, tool_name, provenance, compaction)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
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
                message.reasoning,
                json.dumps(list(message.attachments), ensure_ascii=False, sort_keys=True),
                message.trace,
                json.dumps(list(message.tool_calls), ensure_ascii=False, sort_keys=True),
                message.tool_call_id,
                message.tool_name,
                json.dumps(message.provenance, ensure_ascii=False, sort_keys=True),
                json.dumps(message.compaction, ensure_ascii=False, sort_keys=True),
            ),
        ).fetchone()
        return int(new_id)

    @staticmethod
    def activate_leaf(db: sqlite3.Connection, conversation_id: int, leaf_id: int) -> None:
        """Make `leaf_id` the conversation's active leaf, as a visit (inside a transaction; the
        history importer uses it too)."""
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
    def latest_leaf_in(db: sqlite3.Connection, conversation_id: int) -> int | None:
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
        return [message_from_row(row) for row in rows]


def _edited_stats(original: Message, content: str) -> dict[str, Any]:
    """A tool result edited by the person: what it says of its tool stays, its timing does not
    describe the new text."""
    kept = {k: v for k, v in original.stats.items() if k in ("server", "tool")}
    return {**kept, "edited": True, "chars": len(content)}


def holds_image(attachments: list[dict[str, Any]] | None) -> bool:
    """Whether a message's attachments include an image (it may then have no text)."""
    return any(is_image_record(item) for item in attachments or [])
