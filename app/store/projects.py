"""Projects in the store: chats grouped under a name and instructions, with a default model,
preset, tools and knowledge for the chats made in them.

The instructions go first in the system prompt of every chat of the project
(`system_prompt_for`), the same bytes in each, so the branch cache keeps that prefix once. Each
change of them is a new numbered version (old ones are kept): a reply records in its provenance
the version it was asked with (`InstructionsUsed`, taken when the reply begins, merged into the
provenance its engine reports), so editing instructions never rewrites what an old reply was
generated with, and a replay can ask with the same text (`system_prompt_for(..., version=)`).

Deleting a project is soft and undoable, as deleting a chat is: its chats are either moved out
of it or deleted with it (`ProjectDeletion` says which), and `restore_project` puts both back.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from app.store.presets import PresetRows, check_name
from app.store.project_records import (
    InstructionsUsed,
    Project,
    ProjectDeletion,
    ProjectFields,
    instructions_digest,
    with_instructions,
)
from app.store.records import InvalidInputError, Message, NotFoundError, check_text
from app.store.replies import StreamingReplies

_KEPT_BEGUN = 256  # replies begun whose instructions are remembered (see `_reply_began`)
_COLUMNS = (
    "p.id, p.uid, p.name, p.instructions, p.model_id, p.preset_id, p.tool_servers, p.knowledge,"
    " p.collapsed, p.created_at, p.updated_at,"
    " (SELECT COALESCE(MAX(version), 0) FROM project_instructions WHERE project_id = p.id)"
)


class ProjectRows(PresetRows, StreamingReplies):
    """The project operations of `Store`."""

    def __init__(self, conn: sqlite3.Connection, *args: Any) -> None:
        super().__init__(conn, *args)
        # The instructions each reply streaming now began with, until its provenance is written.
        self._instructions_at_begin: dict[int, InstructionsUsed] = {}

    # --- projects ----------------------------------------------------------------------------

    def create_project(
        self,
        fields: ProjectFields,
        uid: str | None = None,
        collapsed: bool = False,
        versions: Sequence[tuple[int, str, float]] = (),
    ) -> Project:
        """A new project; `uid`, `collapsed` and the `versions` of its instructions (oldest
        first, the last one its instructions) are a restored archive's."""
        values = _checked(fields)
        for _version, text, _created in versions:
            check_text(text, "The project's instructions", allow_empty=True)
        now = time.time()
        with self._write() as db:
            (project_id,) = db.execute(
                "INSERT INTO projects (uid, name, instructions, model_id, preset_id,"
                " tool_servers, knowledge, collapsed, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (uid or uuid.uuid4().hex, *values, bool(collapsed), now, now),
            ).fetchone()
            db.executemany(
                "INSERT OR IGNORE INTO project_instructions (project_id, version, text,"
                " created_at) VALUES (?, ?, ?, ?)",
                [(project_id, *version) for version in versions],
            )
            if fields.instructions and (not versions or versions[-1][1] != fields.instructions):
                _add_version(db, project_id, fields.instructions, now)
        return self.get_project(project_id)

    def list_projects(self) -> list[Project]:
        """The projects not deleted, by name."""
        rows = self._all(
            f"SELECT {_COLUMNS} FROM projects AS p WHERE p.deleted_at IS NULL"
            " ORDER BY p.name COLLATE NOCASE, p.id",
            (),
        )
        return [_project(row) for row in rows]

    def get_project(self, project_id: int) -> Project:
        row = self._one(
            f"SELECT {_COLUMNS} FROM projects AS p WHERE p.id = ? AND p.deleted_at IS NULL",
            (project_id,),
        )
        if row is None:
            raise NotFoundError(f"There is no project with id {project_id!r}.")
        return _project(row)

    def project_by_uid(self, uid: str) -> tuple[Project, bool] | None:
        """The project with `uid` and whether it is deleted (an undo may still bring it back)."""
        row = self._one(
            f"SELECT {_COLUMNS}, p.deleted_at IS NOT NULL FROM projects AS p WHERE p.uid = ?",
            (uid,),
        )
        return None if row is None else (_project(row[:-1]), bool(row[-1]))

    def update_project(self, project_id: int, fields: ProjectFields) -> Project:
        """Change what a person sets; changed instructions become a new version (new turns
        read them, old replies keep the version they were asked with)."""
        values = _checked(fields)
        current = self.get_project(project_id)
        now = time.time()
        with self._write() as db:
            db.execute(
                "UPDATE projects SET name = ?, instructions = ?, model_id = ?, preset_id = ?,"
                " tool_servers = ?, knowledge = ?, updated_at = ? WHERE id = ?",
                (*values, now, project_id),
            )
            if fields.instructions != current.instructions:
                _add_version(db, project_id, fields.instructions, now)
        return self.get_project(project_id)

    def set_project_collapsed(self, project_id: int, collapsed: bool) -> None:
        with self._write() as db:
            db.execute(
                "UPDATE projects SET collapsed = ? WHERE id = ?", (bool(collapsed), project_id)
            )

    def move_to_project(self, conversation_id: int, project_id: int | None) -> None:
        """Put a chat in a project, or out of any (None). Its replies so far keep the
        instructions they were asked with; its next turns read the new project's."""
        self.get_conversation(conversation_id)
        if project_id is not None:
            self.get_project(project_id)
        with self._write() as db:
            db.execute(
                "UPDATE conversations SET project_id = ? WHERE id = ?",
                (project_id, conversation_id),
            )

    def project_chat_ids(self, project_id: int) -> list[int]:
        rows = self._all(
            "SELECT id FROM conversations WHERE project_id = ? AND deleted_at IS NULL"
            " ORDER BY updated_at DESC, id DESC",
            (project_id,),
        )
        return [row[0] for row in rows]

    def delete_project(self, project_id: int, delete_chats: bool) -> ProjectDeletion:
        """Delete the project softly: its chats are moved out of it, or deleted with it
        (undoable as a chat's deletion is, until `purge_deleted`)."""
        project = self.get_project(project_id)
        chats = tuple(self.project_chat_ids(project_id))
        now = time.time()
        with self._write() as db:
            db.execute("UPDATE projects SET deleted_at = ? WHERE id = ?", (now, project_id))
            marked = json.dumps(chats)
            if delete_chats:
                db.execute(
                    "UPDATE conversations SET deleted_at = ?"
                    " WHERE id IN (SELECT value FROM json_each(?))",
                    (now, marked),
                )
            else:
                db.execute(
                    "UPDATE conversations SET project_id = NULL"
                    " WHERE id IN (SELECT value FROM json_each(?))",
                    (marked,),
                )
        return ProjectDeletion(project_id, project.name, chats, delete_chats)

    def restore_project(self, deletion: ProjectDeletion) -> Project:
        """Undo `delete_project`: the project and its chats as they were."""
        with self._write() as db:
            restored = db.execute(
                "UPDATE projects SET deleted_at = NULL WHERE id = ? AND deleted_at IS NOT NULL",
                (deletion.project_id,),
            ).rowcount
            if not restored:
                raise NotFoundError(f"There is no deleted project “{deletion.name}”.")
            db.execute(
                "UPDATE conversations SET project_id = ?, deleted_at = NULL"
                " WHERE id IN (SELECT value FROM json_each(?))"
                + ("" if deletion.chats_deleted else " AND project_id IS NULL"),
                (deletion.project_id, json.dumps(deletion.chat_ids)),
            )
        return self.get_project(deletion.project_id)

    def purge_deleted_projects(self, older_than_s: float = 0.0) -> int:
        with self._write() as db:
            return db.execute(
                "DELETE FROM projects WHERE deleted_at <= ?", (time.time() - older_than_s,)
            ).rowcount

    # --- instructions ------------------------------------------------------------------------

    def instruction_versions(self, project_id: int) -> list[tuple[int, str, float]]:
        """Every version of a project's instructions, oldest first: (version, text, time)."""
        return [
            (int(v), str(t), float(c))
            for v, t, c in self._all(
                "SELECT version, text, created_at FROM project_instructions"
                " WHERE project_id = ? ORDER BY version",
                (project_id,),
            )
        ]

    def system_prompt_for(self, conversation_id: int, version: int | None = None) -> str:
        """The system prompt the chat's model reads: its project's instructions (the current
        ones, or `version` of them where that is kept) ahead of its own system prompt."""
        conversation = self.get_conversation(conversation_id)
        project_id = conversation.project_id
        if project_id is None:
            return conversation.system_prompt
        if version is None:
            row = self._one(
                "SELECT instructions FROM projects WHERE id = ? AND deleted_at IS NULL",
                (project_id,),
            )
        else:
            row = self._one(
                "SELECT text FROM project_instructions WHERE project_id = ? AND version = ?",
                (project_id, version),
            )
        return with_instructions(row[0] if row else "", conversation.system_prompt)

    def instructions_used(self, conversation_id: int) -> InstructionsUsed | None:
        """The instructions a reply in the chat would be asked with now (None: none)."""
        row = self._one(
            "SELECT p.uid, p.name, p.instructions, (SELECT MAX(version) FROM"
            " project_instructions WHERE project_id = p.id) FROM conversations AS c"
            " JOIN projects AS p ON p.id = c.project_id"
            " WHERE c.id = ? AND p.deleted_at IS NULL",
            (conversation_id,),
        )
        if row is None or not str(row[2]).strip():
            return None
        uid, name, text, version = row
        return InstructionsUsed(uid, name, int(version or 0), instructions_digest(text))

    # --- replies record the instructions they were asked with --------------------------------

    def _reply_began(self, reply: Message) -> None:
        used = self.instructions_used(reply.conversation_id)
        if used is not None:
            self._instructions_at_begin[reply.id] = used
            # Kept until the reply's final write has succeeded (it may be retried), so only the
            # oldest go: far more than replies ever stream at once.
            for old in list(self._instructions_at_begin)[:-_KEPT_BEGUN]:
                del self._instructions_at_begin[old]

    def _reply_provenance(
        self, message_id: int, provenance: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        """A reply with recorded provenance also records the project instructions it began
        with (a reply without any, a remote one, records none, as before)."""
        used = self._instructions_at_begin.get(message_id)
        if used is None or not provenance:
            return provenance
        return {**provenance, "instructions": used.as_provenance()}


def _add_version(db: sqlite3.Connection, project_id: int, text: str, now: float) -> None:
    db.execute(
        "INSERT INTO project_instructions (project_id, version, text, created_at) VALUES"
        " (?, (SELECT COALESCE(MAX(version), 0) + 1 FROM project_instructions"
        " WHERE project_id = ?), ?, ?)",
        (project_id, project_id, text, now),
    )


def _checked(fields: ProjectFields) -> tuple[object, ...]:
    """The columns name .. knowledge for `fields`, each checked."""
    name = check_name(fields.name, "The project's name")
    check_text(fields.instructions, "The project's instructions", allow_empty=True)
    servers = None if fields.tool_servers is None else _names(fields.tool_servers, "tool server")
    return (
        name,
        fields.instructions,
        fields.model_id,
        fields.preset_id,
        None if servers is None else json.dumps(servers, ensure_ascii=False),
        json.dumps(_names(fields.knowledge, "knowledge collection"), ensure_ascii=False),
    )


def _names(values: Iterable[object], what: str) -> list[str]:
    names = list(values)
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise InvalidInputError(f"A {what}'s name must be text, not {name!r}.")
    return [str(name) for name in names]


def _project(row: tuple[Any, ...]) -> Project:
    (pid, uid, name, instructions, model_id, preset_id, servers, knowledge, collapsed) = row[:9]
    created, updated, version = row[9:]
    return Project(
        name,
        instructions,
        model_id,
        preset_id,
        None if servers is None else tuple(json.loads(servers)),
        tuple(json.loads(knowledge)),
        id=pid,
        uid=uid,
        collapsed=bool(collapsed),
        created_at=created,
        updated_at=updated,
        instructions_version=int(version),
    )
