"""New chats start from the defaults in Preferences: their model (while the library has it),
their system prompt and their sampling; and a chat's own context length reaches the token meter."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.chat.controller import DEFAULT_PARAMS, ChatController
from app.generation.worker import InferenceWorker
from app.library.install import import_folder
from app.settings import Preferences
from app.store.conversations import Store
from tests.tiny_models import NO_EOS


@pytest.fixture(scope="module")
def linked_library(tiny_models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny llama and gemma3 linked in place, imported once for the module: each import
    checks the folder in a child process (seconds on the 2-core VM), and a linked entry is only
    its branchwise.json, naming the folder by its absolute path, so a copy is the same entry."""
    models = tmp_path_factory.mktemp("linked-library")
    for kind in ("llama", "gemma3_text"):
        import_folder(tiny_models_dir / kind, models, link=True)
    return models


@pytest.fixture
def controller(
    qtbot, tmp_path: Path, tiny_models_dir: Path, linked_library: Path
) -> Iterator[ChatController]:
    """The tiny llama loaded; the library (this test's own copy) holds it and the tiny gemma3
    (linked in place)."""
    models = tmp_path / "models"
    shutil.copytree(linked_library, models, symlinks=True)
    worker = InferenceWorker()
    ctl = ChatController(
        Store.open(tmp_path / "chat.sqlite3"),
        worker,
        Preferences(tmp_path / "settings.ini"),
        models_dir=models,
    )
    with qtbot.waitSignal(worker.modelLoaded, timeout=60000):
        ctl.load_model(tiny_models_dir / "llama")
    yield ctl
    ctl.shutdown()


def test_without_defaults_a_new_chat_takes_the_loaded_model_and_branchwises_sampling(
    controller: ChatController,
) -> None:
    chat = controller.store.get_conversation(controller.new_conversation())
    assert (chat.model_id, chat.system_prompt, chat.params) == ("llama", "", DEFAULT_PARAMS)


def test_a_new_chat_has_the_defaults_from_preferences(qtbot, controller: ChatController) -> None:
    preferences = controller.preferences
    preferences.default_model_id = "gemma3_text"
    preferences.default_system_prompt = "Answer in French."
    # "logit_bias" is no default a person can choose: a hand-edited file's extra is dropped.
    preferences.default_params = {"temperature": 0.0, "max_tokens": 3, "logit_bias": NO_EOS}
    chat = controller.store.get_conversation(controller.new_conversation())
    assert chat.model_id == "gemma3_text"
    assert chat.system_prompt == "Answer in French."
    assert chat.params == {**DEFAULT_PARAMS, "temperature": 0.0, "max_tokens": 3}

    # The chat's settings are what its replies use.
    controller.update_settings(chat.id, model_id="llama")
    with qtbot.waitSignal(controller.worker.generationFinished, timeout=30000) as finished:
        assert controller.send(chat.id, "Bonjour")
    reply = controller.store.active_path(chat.id)[-1]
    assert reply.params["max_tokens"] == 3 and reply.params["temperature"] == 0.0
    assert finished.args[0].stats["generated_tokens"] <= 3


def test_hand_edited_defaults_of_the_wrong_kind_count_as_no_choice(
    controller: ChatController,
) -> None:
    controller.preferences.default_params = {
        "temperature": "hot",
        "top_k": 2.5,
        "max_tokens": True,
        "seed": 3,
        "min_p": 0.1,
    }
    chat = controller.store.get_conversation(controller.new_conversation())
    assert chat.params == {**DEFAULT_PARAMS, "seed": 3, "min_p": 0.1}


def test_the_default_is_named_by_its_library_entry_and_the_chat_by_its_models_id(
    controller: ChatController, tiny_models_dir: Path, tmp_path: Path
) -> None:
    """A second link to the same folder is the entry "gemma3_text-2"; its model's id (the
    loaded model's, which chats record) is still the folder's name."""
    entry = import_folder(tiny_models_dir / "gemma3_text", tmp_path / "models", link=True)
    assert entry.name == "gemma3_text-2"
    controller.preferences.default_model_id = entry.name
    chat = controller.store.get_conversation(controller.new_conversation())
    assert chat.model_id == "gemma3_text"


def test_a_default_model_no_longer_in_the_library_gives_the_loaded_one(
    controller: ChatController,
) -> None:
    controller.preferences.default_model_id = "deleted-model"
    chat = controller.store.get_conversation(controller.new_conversation())
    assert chat.model_id == "llama"


def test_the_token_meter_counts_against_the_chats_context_length(
    qtbot, controller: ChatController
) -> None:
    cid = controller.new_conversation()
    counts: list[dict] = []
    controller.tokenCount.connect(counts.append)
    controller.counts.request_token_count(cid, "Hello there")
    qtbot.waitUntil(lambda: len(counts) == 1, timeout=10000)
    assert counts[0].context_length == 4096  # the tiny llama's own
    controller.update_settings(cid, params={**DEFAULT_PARAMS, "context_length": 512})
    controller.counts.request_token_count(cid, "Hello there")
    qtbot.waitUntil(lambda: len(counts) == 2, timeout=10000)
    assert counts[1].context_length == 512
    assert counts[1].count == counts[0].count
