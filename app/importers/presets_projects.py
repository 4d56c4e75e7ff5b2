"""Presets and projects in Branchwise's own exports, restored by an import: an archive holds
them all ahead of its conversations, a one-chat export the chat's own. They come through the
import as one `SettingsEntry` ahead of the conversations, and each imported conversation names
its project and preset by uid (`ImportedConversation.project_uid`, `preset_uid`).

Restoring is idempotent as the rest of an import is: a preset or project already here (its
uid) is left as the person has it now, and a chat imported before keeps the project the person
has put it in since; only a chat imported now joins the project it was exported from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

from app.importers.tree import ImportedConversation
from app.store.conversations import Store
from app.store.export_settings import (
    PresetRecord,
    ProjectRecord,
    preset_from_json,
    project_from_json,
    restore_preset,
    restore_project,
)
from app.store.records import StoreError


@dataclass(frozen=True, slots=True)
class SettingsEntry:
    """The presets and projects an export holds (ahead of its conversations)."""

    where: str
    presets: tuple[PresetRecord, ...]
    projects: tuple[ProjectRecord, ...]


def settings_entry(data: Mapping[str, Any], where: str) -> SettingsEntry | None:
    """The presets and projects of an archive's head or of a one-chat export (None: it holds
    none). Raises StoreError (an InvalidInputError) naming the first malformed record."""
    presets = [
        preset_from_json(item, f"{where}: presets[{index}]")
        for index, item in enumerate(_items(data.get("presets")))
    ]
    presets += [
        preset_from_json(data[key], key) for key in ("project_preset", "preset") if data.get(key)
    ]
    projects = [
        project_from_json(item, f"{where}: projects[{index}]")
        for index, item in enumerate(_items(data.get("projects")))
    ]
    if data.get("project"):
        projects.append(project_from_json(data["project"], "project"))
    if not presets and not projects:
        return None
    return SettingsEntry(where, tuple(presets), tuple(projects))


def restore(store: Store | None, entry: SettingsEntry, dry_run: bool) -> list[str]:
    """Restore the entry's presets, then its projects (which name their default preset);
    returns a line for the person per record. A dry run only says what would happen."""
    if dry_run or store is None:
        return [_planned(store, "Preset", r.name, r.uid) for r in entry.presets] + [
            _planned(store, "Project", r.fields.name, r.uid) for r in entry.projects
        ]
    said = [_attempt(partial(restore_preset, store, r), r.name) for r in entry.presets]
    return said + [
        _attempt(partial(restore_project, store, r), r.fields.name) for r in entry.projects
    ]


def join(store: Store, conversation_id: int, conversation: ImportedConversation) -> None:
    """Put a chat imported now in the project and on the preset it was exported with, where
    those are here (restored ahead of it)."""
    if conversation.project_uid is not None:
        found = store.project_by_uid(conversation.project_uid)
        if found is not None and not found[1]:
            store.move_to_project(conversation_id, found[0].id)
    if conversation.preset_uid is not None:
        preset = store.preset_by_uid(conversation.preset_uid)
        if preset is not None:
            store.set_conversation_preset(conversation_id, preset.id)


def _planned(store: Store | None, kind: str, name: str, uid: str) -> str:
    if kind == "Preset":
        known = store is not None and store.preset_by_uid(uid) is not None
    else:
        known = store is not None and store.project_by_uid(uid) is not None
    return f"{kind} “{name}”: {'already here' if known else 'would be restored'}."


def _attempt(restore_one: Callable[[], tuple[object, str]], name: str) -> str:
    try:
        return restore_one()[1]
    except StoreError as exc:
        return f"“{name}” could not be restored: {exc}"


def _items(value: object) -> list[object]:
    return cast("list[object]", value) if isinstance(value, list) else []
