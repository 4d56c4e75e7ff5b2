"""Presets in the store: named bundles of a chat's settings, and which preset each chat started
from. The store keeps a preset's settings as the JSON object `app.presets` writes and reads
({"system_prompt", "model_id", "params"}); here they are only checked to load back unchanged.

Names are unique whatever their case ("Coding" and "coding" are one name), so a person, a
request to the local server (`"preset": "NAME"`) and an import all find one preset by it. A
preset's `uid` never changes: a restored archive finds the presets it holds by it.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from dataclasses import dataclass
from typing import Any, cast

from app.store.connection import StoreRows
from app.store.records import (
    InvalidInputError,
    NotFoundError,
    StoreError,
    check_text,
    dump_mapping,
)

MAX_NAME_CHARS = 200
_COLUMNS = "id, uid, name, settings, created_at, updated_at"


@dataclass(frozen=True, slots=True)
class Preset:
    id: int
    uid: str
    name: str
    settings: dict[str, Any]  # as app.presets writes it
    created_at: float
    updated_at: float


def check_name(name: object, what: str) -> str:
    """A preset's or project's name: text, not empty, one line, of a sensible length; trimmed."""
    text = check_text(name, what, allow_empty=False).strip()
    if "\n" in text or "\r" in text:
        raise InvalidInputError(f"{what} must be one line.")
    if len(text) > MAX_NAME_CHARS:
        raise InvalidInputError(f"{what} is too long (the limit is {MAX_NAME_CHARS} characters).")
    return text


class PresetRows(StoreRows):
    """The preset operations of `Store`."""

    def create_preset(self, name: str, settings: dict[str, Any], uid: str | None = None) -> Preset:
        """A new preset; refused when the name is taken (whatever its case)."""
        name = check_name(name, "The preset's name")
        settings_json = dump_mapping(settings, "The preset's settings")
        now = time.time()
        with self._write() as db:
            self._refuse_taken(db, name, None)
            (preset_id,) = db.execute(
                "INSERT INTO presets (uid, name, settings, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?) RETURNING id",
                (uid or uuid.uuid4().hex, name, settings_json, now, now),
            ).fetchone()
        return self.get_preset(preset_id)

    def list_presets(self) -> list[Preset]:
        """Every preset, by name."""
        rows = self._all(f"SELECT {_COLUMNS} FROM presets ORDER BY name COLLATE NOCASE, id", ())
        return [_preset(row) for row in rows]

    def get_preset(self, preset_id: int) -> Preset:
        row = self._one(f"SELECT {_COLUMNS} FROM presets WHERE id = ?", (preset_id,))
        if row is None:
            raise NotFoundError(f"There is no preset with id {preset_id!r}.")
        return _preset(row)

    def preset_named(self, name: str) -> Preset | None:
        """The preset called `name` (whatever its case), or None."""
        row = self._one(
            f"SELECT {_COLUMNS} FROM presets WHERE name = ? COLLATE NOCASE", (name.strip(),)
        )
        return None if row is None else _preset(row)

    def preset_by_uid(self, uid: str) -> Preset | None:
        row = self._one(f"SELECT {_COLUMNS} FROM presets WHERE uid = ?", (uid,))
        return None if row is None else _preset(row)

    def rename_preset(self, preset_id: int, name: str) -> Preset:
        name = check_name(name, "The preset's name")
        with self._write() as db:
            self._refuse_taken(db, name, preset_id)
            self._update_preset(db, preset_id, "name", name)
        return self.get_preset(preset_id)

    def update_preset(self, preset_id: int, settings: dict[str, Any]) -> Preset:
        settings_json = dump_mapping(settings, "The preset's settings")
        with self._write() as db:
            self._update_preset(db, preset_id, "settings", settings_json)
        return self.get_preset(preset_id)

    def duplicate_preset(self, preset_id: int) -> Preset:
        """A copy named "<name> copy" (or "<name> copy 2"...), with the same settings."""
        source = self.get_preset(preset_id)
        taken = {p.name.casefold() for p in self.list_presets()}
        name = free_name(f"{source.name} copy", taken)
        return self.create_preset(name, source.settings)

    def delete_preset(self, preset_id: int) -> None:
        """Delete it: chats that started from it keep their settings and show no preset; a
        project that named it as its default has none."""
        with self._write() as db:
            if not db.execute("DELETE FROM presets WHERE id = ?", (preset_id,)).rowcount:
                raise NotFoundError(f"There is no preset with id {preset_id!r}.")

    def set_conversation_preset(self, conversation_id: int, preset_id: int | None) -> None:
        """Remember which preset the chat's settings came from (None: none)."""
        self.get_conversation(conversation_id)
        if preset_id is not None:
            self.get_preset(preset_id)
        with self._write() as db:
            db.execute(
                "UPDATE conversations SET preset_id = ? WHERE id = ?", (preset_id, conversation_id)
            )

    @staticmethod
    def _refuse_taken(db: sqlite3.Connection, name: str, own_id: int | None) -> None:
        row = db.execute(
            "SELECT id FROM presets WHERE name = ? COLLATE NOCASE AND id IS NOT ?", (name, own_id)
        ).fetchone()
        if row is not None:
            raise InvalidInputError(f"There is already a preset called “{name}”.")

    @staticmethod
    def _update_preset(db: sqlite3.Connection, preset_id: int, column: str, value: object) -> None:
        changed = db.execute(
            f"UPDATE presets SET {column} = ?, updated_at = ? WHERE id = ?",
            (value, time.time(), preset_id),
        ).rowcount
        if not changed:
            raise NotFoundError(f"There is no preset with id {preset_id!r}.")


def free_name(wanted: str, taken: set[str]) -> str:
    """`wanted`, or `wanted 2`, `wanted 3`... : the first not in `taken` (casefolded names)."""
    name, number = wanted, 1
    while name.casefold() in taken:
        number += 1
        name = f"{wanted} {number}"
    return name


def _preset(row: tuple[Any, ...]) -> Preset:
    preset_id, uid, name, settings, created, updated = row
    try:
        loaded = json.loads(settings)
    except ValueError as exc:
        raise StoreError(f"The preset “{name}” could not be read: {exc}.") from exc
    settings_dict = cast("dict[str, Any]", loaded) if isinstance(loaded, dict) else {}
    return Preset(preset_id, uid, name, settings_dict, created, updated)
