"""A chat that names a draft model from the library, end to end on the real worker with tiny
models: the worker loads it and the reply is the main model's own, token for token, with the
drafted tokens in its stats; a draft model that cannot be used is said once, naming both models
and why, and the reply still comes; a chat with no choice of its own uses its model's default
from Preferences."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.chat.controller import ChatController
from app.generation.worker import InferenceWorker
from app.settings import Preferences
from app.store.conversations import Store
from tests.tiny_models import NO_EOS, add_token, build_model

pytestmark = pytest.mark.usefixtures("free_drafts")

GREEDY = {"temperature": 0.0, "max_tokens": 10, "seed": 0, "logit_bias": NO_EOS}
ASK = "the cat sat on the mat and the dog sat on the log"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, llama_path: Path) -> Path:
    """A models folder: the main model, a draft of the same family (other weights, the same
    tokenizer) and a model with another vocabulary."""
    models = tmp_path_factory.mktemp("library")
    shutil.copytree(llama_path, models / "llama")
    build_model("llama", models / "llama-draft", seed=1)
    add_token(shutil.copytree(llama_path, models / "other-vocab"))
    return models


@pytest.fixture
def controller(qtbot, tmp_path: Path, library: Path) -> Iterator[ChatController]:
    worker = InferenceWorker()
    ctl = ChatController(
        Store.open(tmp_path / "chat.sqlite3"),
        worker,
        Preferences(tmp_path / "settings.ini"),
        lambda progress: library / "llama",
        models_dir=library,
    )
    with qtbot.waitSignal(worker.modelLoaded, timeout=60000):
        ctl.start()
    yield ctl
    if ctl.worker._thread.is_alive():
        ctl.shutdown()


def reply_to(qtbot, ctl: ChatController, params: dict) -> tuple[str, dict, dict]:
    """A new chat with `params` answers ASK: the reply's text, params and stats."""
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=params)
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000):
        assert ctl.send(cid, ASK)
    qtbot.waitUntil(lambda: not ctl.is_busy(), timeout=5000)
    reply = ctl.store.active_path(cid)[-1]
    assert reply.status == "complete"
    return reply.content, reply.params, reply.stats


def test_a_draft_model_guesses_and_the_reply_is_the_models_own(
    qtbot, controller: ChatController
) -> None:
    memory: list[dict] = []
    controller.memoryChanged.connect(memory.append)
    plain, _, plain_stats = reply_to(qtbot, controller, {**GREEDY, "speculation": "off"})
    assert plain_stats["drafted_tokens"] == 0
    # The worker reports memory after the reply has ended: the report may come a moment later.
    qtbot.waitUntil(lambda: bool(memory), timeout=5000)
    main_weights = memory[-1].weights_bytes
    drafted = {**GREEDY, "speculation": "draft", "draft_model": "llama-draft"}
    text, params, stats = reply_to(qtbot, controller, drafted)
    assert text == plain and stats["generated_tokens"] == plain_stats["generated_tokens"]
    assert stats["drafted_tokens"] > 0 and stats["accepted_tokens"] <= stats["drafted_tokens"]
    # The worker loaded the draft model: its weights show in the memory report.
    qtbot.waitUntil(lambda: memory[-1].weights_bytes > main_weights, timeout=5000)
    assert params["speculation"] == "draft" and params["draft_model"] == "llama-draft"
    # The draft stays loaded for the next reply, which drafts again.
    again, _, again_stats = reply_to(qtbot, controller, drafted)
    assert again == plain and again_stats["drafted_tokens"] > 0


def test_a_draft_model_with_another_vocabulary_is_refused_once_and_the_reply_still_comes(
    qtbot, controller: ChatController
) -> None:
    notices: list[str] = []
    controller.notice.connect(notices.append)
    plain, _, _ = reply_to(qtbot, controller, {**GREEDY, "speculation": "off"})
    odd = {**GREEDY, "speculation": "draft", "draft_model": "other-vocab"}
    text, _, stats = reply_to(qtbot, controller, odd)
    assert text == plain and stats["generated_tokens"] == GREEDY["max_tokens"]
    assert len(notices) == 1
    assert "“other-vocab” cannot be the draft model for “llama”" in notices[0]
    assert "vocabularies differ" in notices[0] and "from the conversation instead" in notices[0]
    text, _, _ = reply_to(qtbot, controller, odd)
    assert text == plain and len(notices) == 1, "said once"


def test_a_draft_model_gone_from_the_library_is_said_once(
    qtbot, controller: ChatController
) -> None:
    notices: list[str] = []
    controller.notice.connect(notices.append)
    gone = {**GREEDY, "speculation": "draft", "draft_model": "deleted-model"}
    text, params, _ = reply_to(qtbot, controller, gone)
    assert text and params["speculation"] == "prompt_lookup"
    reply_to(qtbot, controller, gone)
    assert len(notices) == 1 and "“deleted-model” is no longer in the library" in notices[0]


def test_a_chat_without_its_own_choice_uses_its_models_default(
    qtbot, controller: ChatController
) -> None:
    controller.preferences.set_draft_model_for("llama", "llama-draft")
    _, params, stats = reply_to(qtbot, controller, GREEDY)
    assert params["draft_model"] == "llama-draft" and stats["drafted_tokens"] > 0
    # The chat's own choice wins: prompt lookup (None), or speculation off.
    _, params, _ = reply_to(qtbot, controller, {**GREEDY, "draft_model": None})
    assert params["speculation"] == "prompt_lookup" and params["draft_model"] is None
    _, params, stats = reply_to(qtbot, controller, {**GREEDY, "speculation": "off"})
    assert params["speculation"] == "off" and stats["drafted_tokens"] == 0


def test_loading_another_model_drops_the_draft_which_is_checked_again_against_it(
    qtbot, controller: ChatController, library: Path
) -> None:
    notices: list[str] = []
    controller.notice.connect(notices.append)
    drafted = {**GREEDY, "speculation": "draft", "draft_model": "llama-draft"}
    _, _, stats = reply_to(qtbot, controller, drafted)
    assert stats["drafted_tokens"] > 0 and not notices
    with qtbot.waitSignal(controller.worker.modelLoaded, timeout=60000):
        controller.load_model(library / "other-vocab")
    text, _, stats = reply_to(qtbot, controller, drafted)
    assert text and stats["generated_tokens"] == GREEDY["max_tokens"]
    assert len(notices) == 1
    assert "“llama-draft” cannot be the draft model for “other-vocab”" in notices[0]
