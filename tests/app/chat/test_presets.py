"""Presets as a person uses them: save a chat's settings as one, give another chat the preset
(every setting it fixes, the rest back to the new-chat defaults), see the drift named setting by
setting, new chats from the default preset, and LM Studio's preset files imported with what they
cannot carry named."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.chat.new_chat import ChatModels, new_chat, new_chat_params
from app.chat.presets.actions import PresetActions, PresetState
from app.chat.presets.bundle import PRESET_KEYS
from app.chat.presets.lmstudio import PresetFileError, read_lmstudio_preset
from app.chat.tools.choice import CHAT_KEY
from app.generation.reply_generation import DEFAULT_PARAMS
from app.generation.think_settings import THINK
from app.library.entries import ModelDefaults
from app.settings import Preferences
from app.store.conversations import Store
from app.store.project_records import ProjectFields

# A preset as LM Studio 0.3 writes it into ~/.lmstudio/config-presets (keys from lmstudio-js's
# kv-config schema): switches with a value are {"checked", "value"}.
LMSTUDIO_PRESET = {
    "identifier": "@local:careful-coder",
    "name": "Careful coder",
    "changed": True,
    "operation": {
        "fields": [
            {"key": "llm.prediction.systemPrompt", "value": "You review code carefully."},
            {"key": "llm.prediction.temperature", "value": 0.2},
            {"key": "llm.prediction.topKSampling", "value": 20},
            {"key": "llm.prediction.topPSampling", "value": {"checked": True, "value": 0.9}},
            {"key": "llm.prediction.minPSampling", "value": {"checked": False, "value": 0.05}},
            {"key": "llm.prediction.repeatPenalty", "value": {"checked": True, "value": 1.1}},
            {"key": "llm.prediction.maxPredictedTokens", "value": {"checked": True, "value": 800}},
            {"key": "llm.prediction.seed", "value": {"checked": True, "value": 42}},
            {"key": "llm.prediction.contextOverflowPolicy", "value": "rollingWindow"},
            {"key": "llm.prediction.stopStrings", "value": ["###"]},
            {"key": "llm.prediction.llama.cpuThreads", "value": 8},
            {"key": "llm.prediction.someFutureKey", "value": 1},
        ]
    },
    "load": {
        "fields": [
            {"key": "llm.load.contextLength", "value": 8192},
            {"key": "llm.load.llama.flashAttention", "value": True},
        ]
    },
}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "chats.sqlite3") as store:
        yield store


@pytest.fixture
def actions(qapp, store: Store, tmp_path: Path) -> PresetActions:
    return PresetActions(store, Preferences(tmp_path / "settings.ini"))


def test_a_chat_takes_a_preset_and_shows_how_it_drifts(store: Store, actions: PresetActions):
    source = store.create_conversation(
        system_prompt="Be brief.",
        params={**DEFAULT_PARAMS, "temperature": 0.1, THINK: False, CHAT_KEY: ["files"]},
    )
    preset = actions.save_current(source.id, "Brief")
    assert preset is not None and actions.state(source.id).drift == ()

    # Another chat with a context limit of its own and a tool approval (not a preset's).
    other = store.create_conversation(
        params={**DEFAULT_PARAMS, "context_length": 4096, "approved": ["x"]}
    )
    assert actions.apply(other.id, preset.id) is None  # the preset names no model
    taken = store.get_conversation(other.id)
    assert taken.system_prompt == "Be brief."
    assert taken.params["temperature"] == 0.1 and taken.params[THINK] is False
    assert taken.params[CHAT_KEY] == ["files"]
    assert "context_length" not in taken.params  # back to the model's own, as the preset says
    assert taken.params["approved"] == ["x"]  # not a preset's: kept
    assert actions.state(other.id) == PresetState(other.id, preset.id, "Brief", ())

    store.update_settings(other.id, params={**taken.params, "temperature": 0.9})
    assert actions.state(other.id).drift == ("temperature 0.1 → 0.9",)
    store.update_settings(other.id, system_prompt="Be long.")
    assert "system prompt" in actions.state(other.id).drift
    # Updating the preset from the chat ends the drift; other chats on it now drift instead.
    actions.update_from(preset.id, other.id)
    assert actions.state(other.id).drift == ()
    assert "system prompt" in actions.state(source.id).drift


def test_new_chats_start_from_the_default_preset_or_their_projects(
    store: Store, actions: PresetActions, tmp_path: Path
) -> None:
    preferences = Preferences(tmp_path / "settings.ini")
    coding = store.create_preset("Coding", {"system_prompt": "Code.", "params": {"top_k": 5}})
    writing = store.create_preset(
        "Writing", {"system_prompt": "Write.", "model_id": "gemma", "params": {"top_k": 50}}
    )
    preferences.default_preset_id = coding.id
    project = store.create_project(
        ProjectFields(
            "Novel",
            "Chapters.",
            preset_id=writing.id,
            tool_servers=("notes",),
            knowledge=("Drafts", "Research"),
        )
    )

    def made(project_id: int | None, own: ModelDefaults | None = None):
        found = own or ModelDefaults()
        models = ChatModels(lambda: "llama", lambda m: m == "gemma", lambda _model: found)
        return new_chat(store, preferences, project_id, models)

    ollama = ModelDefaults("Be terse.", {"temperature": 0.3})
    loose = made(None, ollama)  # a preset chosen: the model's own defaults give way to it
    assert (loose.system_prompt, loose.params["top_k"], loose.preset_id) == ("Code.", 5, coding.id)
    assert loose.model_id == "llama" and loose.params == {**DEFAULT_PARAMS, "top_k": 5}
    inside = made(project.id)
    assert (inside.system_prompt, inside.model_id, inside.preset_id) == (
        "Write.",
        "gemma",
        writing.id,
    )
    assert inside.params[CHAT_KEY] == ["notes"] and inside.project_id == project.id
    assert inside.params["knowledge"] == ["Drafts", "Research"]  # the project's knowledge
    assert "knowledge" not in loose.params
    # A preset deleted since counts as none chosen: Preferences' defaults apply.
    store.delete_preset(coding.id)
    assert made(None).params == new_chat_params(preferences.default_params)
    # With no preset, what the model's source app gave it fills what Preferences leave alone.
    plain = made(None, ollama)
    assert plain.system_prompt == "Be terse." and plain.params["temperature"] == 0.3


def test_an_lmstudio_preset_is_imported_naming_what_it_cannot_carry(
    store: Store, actions: PresetActions, tmp_path: Path
) -> None:
    path = tmp_path / "careful-coder.preset.json"
    path.write_text(json.dumps(LMSTUDIO_PRESET), encoding="utf-8")
    read = read_lmstudio_preset(path)
    assert read.name == "Careful coder"
    assert read.settings.system_prompt == "You review code carefully."
    assert read.settings.params == {
        "temperature": 0.2,
        "top_k": 20,
        "top_p": 0.9,
        "min_p": 0.0,  # unchecked: off
        "repetition_penalty": 1.1,
        "max_tokens": 800,
        "seed": 42,
        "overflow": "rolling",
        "context_length": 8192,
    }
    assert set(read.settings.params) <= PRESET_KEYS
    assert read.left_out == (
        "flash attention",
        "stop strings",
        "CPU threads",
        "llm.prediction.someFutureKey",
    )

    store.create_preset("Careful coder", {})
    (done,) = actions.import_lmstudio([path])
    assert done.preset is not None and done.preset.name == "Careful coder 2"
    assert "Not carried: flash attention, stop strings" in done.message

    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x", "operation": ', encoding="utf-8")
    with pytest.raises(PresetFileError, match="could not be read"):
        read_lmstudio_preset(broken)
    other = tmp_path / "chat.json"
    other.write_text('{"messages": []}', encoding="utf-8")
    (refused,) = actions.import_lmstudio([other])
    assert refused.preset is None and "not an LM Studio preset" in refused.message
