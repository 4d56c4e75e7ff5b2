"""What a new chat starts with: Preferences' defaults, a preset's settings over them (the
project's default preset, else the default preset for new chats), and a project's model and
tools over those; the knowledge it reads is its project's, else Preferences' default. Where no
preset applies, the model's own defaults (what its source app gave it: Ollama's system prompt,
stop words and parameters) fill what Preferences leave at Branchwise's defaults.

The order is what a person expects: a project is the most specific choice, then its preset,
then the app-wide defaults, then the model's. A preset or project that no longer exists counts
as none chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.chat.knowledge.choice import CHAT_KEY as KNOWLEDGE_KEY
from app.chat.knowledge.choice import with_knowledge_of
from app.chat.presets.bundle import PresetSettings
from app.chat.tools.choice import CHAT_KEY
from app.generation.reply_generation import DEFAULT_PARAMS
from app.settings import Preferences
from app.store.conversations import Store
from app.store.presets import Preset
from app.store.project_records import Project
from app.store.records import NotFoundError

if TYPE_CHECKING:
    from app.library.entries import ModelDefaults


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


@dataclass(frozen=True)
class ChatModels:
    """What a new chat asks of the models: `default()` is the model a chat gets when nothing
    more specific names one; `usable(id)` whether a named model can still be used (in the
    library, or on a server); `defaults(id)` the model's own defaults."""

    default: Callable[[], str | None]
    usable: Callable[[str], bool]
    defaults: Callable[[str | None], ModelDefaults]


def with_model_defaults(
    params: dict[str, Any], chosen: dict[str, Any], model: dict[str, Any]
) -> dict[str, Any]:
    """`params` with the model's own defaults where the person chose nothing else: a key whose
    new-chat default the person set (`chosen`, away from Branchwise's) keeps their value.
    Values of the wrong kind are left out; stop strings are kept when they are text."""
    own = {
        key: value
        for key, value in model.items()
        if key in DEFAULT_PARAMS
        and _same_kind(key, value)
        and chosen.get(key, DEFAULT_PARAMS[key]) == DEFAULT_PARAMS[key]
    }
    stops = model.get("stop")
    if isinstance(stops, list) and stops and "stop" not in chosen:
        words = [word for word in stops if isinstance(word, str) and word]  # pyright: ignore[reportUnknownVariableType]
        own["stop"] = words[:_MAX_STOPS]
    return {**params, **own}


# A chat's stop strings: the server's limit (app.server.openai_schema) holds for a chat too.
_MAX_STOPS = 4


def new_chat(
    store: Store, preferences: Preferences, project_id: int | None, models: ChatModels
) -> NewChat:
    """The settings of a chat made now (in `project_id`, or loose)."""
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
    params = with_knowledge_of(params, preferences.default_params)
    if project is not None and project.knowledge:  # a project's chats read its knowledge
        params = {**params, KNOWLEDGE_KEY: list(project.knowledge)}
    named = [project.model_id if project else None, settings.model_id if settings else None]
    model_id = next((m for m in named if m and models.usable(m)), None) or models.default()
    if settings is None:
        own = models.defaults(model_id)
        system_prompt = system_prompt or own.system_prompt
        params = with_model_defaults(params, preferences.default_params, own.params)
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
