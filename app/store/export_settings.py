"""Presets and projects in exports: their JSON records, checked on the way back in, and their
restoring, found again by `uid` so a second restore adds nothing.

    preset:  {"uid", "name", "settings": {...}, "created_at", "updated_at"}
    project: {"uid", "name", "instructions", "model_id", "preset": preset uid | null,
              "tool_servers": [name, ...] | null, "knowledge": [name, ...], "collapsed",
              "created_at", "updated_at",
              "instruction_versions": [{"version", "text", "created_at"}, ...]}

A one-chat export holds the chat's own (`"project"`, `"preset"`: records, when it has them);
`branchwise export`'s archive holds them all ahead of its conversations and names each chat's by
uid. A restored preset whose name another preset has taken meanwhile is renamed
("Coding (imported)"); one known by its uid is left as the person has it now.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from app.store.presets import Preset, free_name
from app.store.project_records import Project, ProjectFields
from app.store.projects import ProjectRows
from app.store.records import InvalidInputError, check_optional_text, check_text, dump_mapping


@dataclass(frozen=True, slots=True)
class PresetRecord:
    uid: str
    name: str
    settings: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ProjectRecord:
    uid: str
    fields: ProjectFields  # its preset_id is None: `preset_uid` names it
    preset_uid: str | None
    collapsed: bool
    versions: tuple[tuple[int, str, float], ...]


def preset_json(preset: Preset) -> dict[str, Any]:
    return {
        "uid": preset.uid,
        "name": preset.name,
        "settings": preset.settings,
        "created_at": preset.created_at,
        "updated_at": preset.updated_at,
    }


def project_json(store: ProjectRows, project: Project) -> dict[str, Any]:
    preset = None if project.preset_id is None else store.get_preset(project.preset_id)
    return {
        "uid": project.uid,
        "name": project.name,
        "instructions": project.instructions,
        "model_id": project.model_id,
        "preset": None if preset is None else preset.uid,
        "tool_servers": None if project.tool_servers is None else list(project.tool_servers),
        "knowledge": list(project.knowledge),
        "collapsed": project.collapsed,
        "created_at": project.created_at,
        "updated_at": project.updated_at,
        "instruction_versions": [
            {"version": v, "text": t, "created_at": c}
            for v, t, c in store.instruction_versions(project.id)
        ],
    }


def chat_settings_json(
    store: ProjectRows, project_id: int | None, preset_id: int | None
) -> dict[str, Any]:
    """What a one-chat export adds: its project's record (with the project's preset) and the
    record of the preset it started from."""
    out: dict[str, Any] = {}
    if project_id is not None:
        project = store.get_project(project_id)
        out["project"] = project_json(store, project)
        if project.preset_id is not None:
            out["project_preset"] = preset_json(store.get_preset(project.preset_id))
    if preset_id is not None:
        out["preset"] = preset_json(store.get_preset(preset_id))
    return out


def preset_from_json(data: object, where: str) -> PresetRecord:
    item = _object(data, where)
    settings = item.get("settings")
    dump_mapping(settings, f"{where}.settings")
    return PresetRecord(
        _uid(item.get("uid"), where),
        check_text(item.get("name"), f"{where}.name", allow_empty=False),
        dict(cast("dict[str, Any]", settings)) if isinstance(settings, dict) else {},
    )


def project_from_json(data: object, where: str) -> ProjectRecord:
    item = _object(data, where)
    versions: list[tuple[int, str, float]] = []
    for index, raw in enumerate(_list(item.get("instruction_versions"), where)):
        entry = _object(raw, f"{where}.instruction_versions[{index}]")
        version, created = entry.get("version"), entry.get("created_at")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise InvalidInputError(f"{where}.instruction_versions[{index}] has no version.")
        text = check_text(entry.get("text"), f"{where}: instructions {version}", allow_empty=True)
        versions.append((version, text, _time(created)))
    servers = item.get("tool_servers")
    preset = item.get("preset")
    fields = ProjectFields(
        check_text(item.get("name"), f"{where}.name", allow_empty=False),
        check_text(item.get("instructions", ""), f"{where}.instructions", allow_empty=True),
        check_optional_text(item.get("model_id"), f"{where}.model_id"),
        None,
        None if servers is None else _names(servers, f"{where}.tool_servers"),
        _names(item.get("knowledge", []), f"{where}.knowledge"),
    )
    return ProjectRecord(
        _uid(item.get("uid"), where),
        fields,
        None if preset is None else _uid(preset, f"{where}.preset"),
        item.get("collapsed") is True,
        tuple(sorted(versions)),
    )


def restore_preset(store: ProjectRows, record: PresetRecord) -> tuple[Preset, str]:
    """The preset `record` describes: the one already here with its uid, else a new one.
    Returns it and what became of it, for the person."""
    known = store.preset_by_uid(record.uid)
    if known is not None:
        return known, f"Preset “{known.name}”: already here."
    taken = {p.name.casefold() for p in store.list_presets()}
    name = record.name
    if name.casefold() in taken:
        name = free_name(f"{record.name} (imported)", taken)
    preset = store.create_preset(name, record.settings, uid=record.uid)
    return preset, f"Preset “{preset.name}”: restored."


def restore_project(store: ProjectRows, record: ProjectRecord) -> tuple[Project | None, str]:
    """The project `record` describes: the one already here with its uid (None when it was
    deleted since, as a deleted chat is not imported again), else a new one."""
    known = store.project_by_uid(record.uid)
    if known is not None:
        project, deleted = known
        if deleted:
            return None, f"Project “{project.name}”: deleted here since; left out."
        return project, f"Project “{project.name}”: already here."
    preset = None if record.preset_uid is None else store.preset_by_uid(record.preset_uid)
    fields = ProjectFields(
        record.fields.name,
        record.fields.instructions,
        record.fields.model_id,
        None if preset is None else preset.id,
        record.fields.tool_servers,
        record.fields.knowledge,
    )
    project = store.create_project(fields, record.uid, record.collapsed, record.versions)
    return project, f"Project “{project.name}”: restored."


def _object(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{where} must be a JSON object, not {type(value).__name__}.")
    return cast("Mapping[str, Any]", value)


def _list(value: object, where: str) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidInputError(f"{where} must be a list.")
    return cast("list[object]", value)


def _uid(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise InvalidInputError(f"{where} has no usable uid.")
    return value


def _names(value: object, where: str) -> tuple[str, ...]:
    names = _list(value, where)
    if not all(isinstance(name, str) and name.strip() for name in names):
        raise InvalidInputError(f"{where} must be a list of names.")
    return tuple(cast("list[str]", names))


def _time(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return 0.0


def restore_chat_settings(store: ProjectRows, data: object) -> tuple[int | None, int | None]:
    """The project and preset a one-chat export names (`chat_settings_json`), restored; their
    ids here (None: none, or the project was deleted since). Every record is checked first."""
    item = _object(data, "The file")
    presets = {
        key: preset_from_json(item[key], key)
        for key in ("project_preset", "preset")
        if item.get(key)
    }
    project = project_from_json(item["project"], "project") if item.get("project") else None
    restored = {key: restore_preset(store, record)[0].id for key, record in presets.items()}
    project_id = None if project is None else restore_project(store, project)[0]
    return (None if project_id is None else project_id.id), restored.get("preset")
