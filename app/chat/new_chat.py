"""What a new chat starts with: Preferences' defaults, a preset's settings over them (the
project's default preset, else the default preset for new chats), and a project's model and
tools over those.

The order is what a person expects: a project is the most specific choice, then its preset,
then the app-wide defaults. A preset or project that no longer exists counts as none chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.chat.presets.bundle import PresetSettings
from app.chat.tools.choice import CHAT_KEY
from app.generation.reply_generation import DEFAULT_PARAMS
from app.settings import Preferences
from app.store.conversations import Store
from app.store.presets import Preset
from app.store.project_records import Project
from app.store.records import NotFoundError


@dataclass(frozen=True)
class NewChat:
    model_id: str | None
    system_prompt: str
    params: dict[str, Any]
    preset_id: int | None
    project_id: int | None


def new_chat_params(defaults: dict[str, Any]) -> dict[str, Any]:
    """A new chat's params: Branchwise's defaults with the chosen ones over them. Keys
    Branchwise does not know, and values of the wrong kind (a hand-edited settings file), are
    left out, as Preferences treats any unreadable value: as no choice."""
    return {
        **DEFAULT_PARAMS,
        **{k: v for k, v in defaults.items() if k in DEFAULT_PARAMS and _same_kind(k, v)},
    }


def new_chat(
    store: Store,
    preferences: Preferences,
    project_id: int | None,
    default_model: Callable[[], str | None],
    usable_model: Callable[[str], bool],
) -> NewChat:
    """The settings of a chat made now (in `project_id`, or loose). `default_model()` is the
    model a chat gets when nothing more specific names one; `usable_model(id)` whether a named
    model can still be used (in the library, or on a server)."""
    defaults = new_chat_params(preferences.default_params)
    project = _project(store, project_id)
    preset = _preset(store, project.preset_id if project and project.preset_id else None)
    if preset is None:
        preset = _preset(store, preferences.default_preset_id)
    settings = PresetSettings.from_json(preset.settings) if preset else None
    system_prompt = settings.system_prompt if settings else preferences.default_system_prompt
    params = settings.applied_to(defaults, defaults) if settings else defaults
    if project is not None and project.tool_servers is not None:
        params = {**params, CHAT_KEY: list(project.tool_servers)}
    named = [project.model_id if project else None, settings.model_id if settings else None]
    model_id = next((m for m in named if m and usable_model(m)), None) or default_model()
    return NewChat(
        model_id,
        system_prompt,
        params,
        preset.id if preset else None,
        project.id if project else None,
    )


def _project(store: Store, project_id: int | None) -> Project | None:
    if project_id is None:
        return None
    try:
        return store.get_project(project_id)
    except NotFoundError:
        return None


def _preset(store: Store, preset_id: int | None) -> Preset | None:
    if preset_id is None:
        return None
    try:
        return store.get_preset(preset_id)
    except NotFoundError:
        return None


def _same_kind(key: str, value: Any) -> bool:
    default = DEFAULT_PARAMS[key]
    if isinstance(value, bool):
        return False
    if default is None:  # the seed: none, or a whole number
        return value is None or isinstance(value, int)
    if isinstance(default, str):
        return isinstance(value, str)
    if isinstance(default, int):
        return isinstance(value, int)
    return isinstance(value, int | float)
