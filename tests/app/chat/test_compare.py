"""Compare through the controller, the real worker and two tiny llamas with different weights
(so a cache shared across models would change the second model's answer): models that fit
together run side by side and stay loaded; models that do not run one after another, with a
notice saying why; every answer is a sibling labelled with its model, and a follow-up on each
branch goes to that branch's model and reuses that model's cache."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from app.chat.branch_map_source import BranchMapSource
from app.chat.branch_model import ModelFollowed
from app.chat.compare_actions import library_model
from app.chat.controller import ChatController
from app.generation.compare_plan import CompareModel
from app.generation.worker import InferenceWorker, default_engine_factory
from app.library.entries import list_models, rename_model
from app.library.install import import_folder
from app.settings import Preferences
from app.store.conversations import Message, Store
from inference import SamplingParams, load_model
from tests.engine_reference import Comparison, check_tokens, reference
from tests.tiny_models import NO_EOS, build_model

GREEDY = {"temperature": 0.0, "max_tokens": 5, "seed": 0, "logit_bias": NO_EOS}
ROOMY = 50_000_000  # both tiny llamas (about 0.5 MB each as float32) fit
TIGHT = 700_000  # one fits, two do not


@pytest.fixture(scope="module")
def library(tiny_models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A models folder holding the tiny llama and a second one with other weights."""
    other = build_model("llama", tmp_path_factory.mktemp("llama-b") / "llama-b", seed=1)
    models = tmp_path_factory.mktemp("library")
    for source, name in ((tiny_models_dir / "llama", "Tiny Llama A"), (other, "Tiny Llama B")):
        entry = import_folder(source, models, link=True)
        rename_model(models, entry.name, name)
    return models


def _controller(qtbot, folder: Path, library: Path, room: int) -> ChatController:
    store = Store.open(folder / "chat.sqlite3")
    factory = partial(default_engine_factory, cache_dir=folder / "caches")
    worker = InferenceWorker(factory, model_room=lambda _held: room)
    first = next(m.path for m in list_models(library) if m.name == "Tiny Llama A")
    ctl = ChatController(
        store,
        worker,
        Preferences(folder / "settings.ini"),
        lambda _progress: first,
        models_dir=library,
    )
    with qtbot.waitSignal(worker.modelLoaded, timeout=60000):
        ctl.start()
    return ctl


@pytest.fixture
def started(qtbot, tmp_path: Path, library: Path) -> Iterator[partial[ChatController]]:
    made: list[ChatController] = []

    def start(room: int) -> ChatController:
        made.append(_controller(qtbot, tmp_path, library, room))
        return made[-1]

    yield partial(start)
    for ctl in made:
        if ctl.worker.is_alive():
            ctl.shutdown()


def _models(library: Path) -> list[CompareModel]:
    return [library_model(info, "auto") for info in list_models(library)]


def _conversation(ctl: ChatController) -> int:
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=GREEDY, model_id="llama")
    return cid


def _compare(qtbot, ctl: ChatController, cid: int, models: list[CompareModel]) -> list[Message]:
    with qtbot.waitSignal(ctl.busyChanged, timeout=60000, check_params_cb=lambda b: not b):
        assert ctl.send_to_models(cid, "Hello there", None, models)
    user = ctl.store.active_path(cid)[0]
    return ctl.store.children(user.id)


def _follow_up(qtbot, ctl: ChatController, cid: int) -> Message:
    qtbot.waitUntil(lambda: ctl.model_state == "ready", timeout=60000)
    with qtbot.waitSignal(ctl.busyChanged, timeout=60000, check_params_cb=lambda b: not b):
        assert ctl.send(cid, "Tell me more")
    return ctl.store.active_path(cid)[-1]


def _switch_to(qtbot, ctl: ChatController, message: Message) -> list[ModelFollowed]:
    followed: list[ModelFollowed] = []
    ctl.modelFollowed.connect(followed.append)
    assert ctl.switch_to_message(message.id)
    qtbot.waitUntil(
        lambda: (
            ctl.model_state == "ready"
            and getattr(ctl.model_info, "model_id", None) == message.model_id
        ),
        timeout=60000,
    )
    return followed


def _assert_reused(follow_up: Message, before: Message) -> None:
    """The follow-up read only its new turn: the prompt `before` was answered from came from
    the cache (a follow-up's cache is only its own model's: another's would change the text)."""
    new_part = follow_up.stats["prompt_tokens"] - before.stats["prompt_tokens"]
    assert 0 < follow_up.stats["prefill_tokens"] <= new_part
    assert follow_up.stats["cached_tokens"] >= before.stats["prompt_tokens"]


def _assert_from_scratch(ctl: ChatController, cid: int, replies: list[Message]) -> None:
    """Each answer is what its own model writes from an empty cache, token for token."""
    stats = Comparison()
    for reply in replies:
        loaded = load_model(Path(reply.provenance["model"]["path"]), "auto")
        messages = [{"role": "user", "content": "Hello there"}]
        ids = loaded.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
        params = SamplingParams(temperature=0.0, logit_bias={int(k): v for k, v in NO_EOS.items()})
        ref = reference(loaded, list(ids), params, GREEDY["max_tokens"])
        check_tokens(tuple(reply.provenance["token_ids"]), ref, stats, str(reply.model_id))


def test_models_that_fit_together_run_side_by_side_and_each_branch_keeps_its_cache(
    qtbot, started, library: Path
) -> None:
    ctl = started(ROOMY)
    cid = _conversation(ctl)
    models = _models(library)
    plan = ctl.compare_plan(cid, models)
    assert plan.together
    assert plan.notice.startswith("Running side by side: Tiny Llama A ")
    assert "fit in 50.0 MB free" in plan.notice

    replies = _compare(qtbot, ctl, cid, models)
    assert [r.model_id for r in replies] == ["llama", "llama-b"]
    assert [r.status for r in replies] == ["complete", "complete"]
    assert all(r.stats["generated_tokens"] == GREEDY["max_tokens"] for r in replies)
    assert [Path(r.provenance["model"]["path"]).name for r in replies] == ["llama", "llama-b"]
    assert (
        replies[0].provenance["model"]["weights_digest"]
        != (replies[1].provenance["model"]["weights_digest"])
    )
    _assert_from_scratch(ctl, cid, replies)
    # Both stay loaded; the chat's own model is the main one and its branch is shown.
    held = ctl.worker.held_models()
    assert [(h.model_id, h.main) for h in held] == [("llama", True), ("llama-b", False)]
    assert ctl.store.active_path(cid)[-1].id == replies[0].id
    # The branch map finds each branch, its answer included, in its own model's memory (the
    # loaded model's caches hold only the shared question for the other one).
    source = BranchMapSource(ctl.store, ctl.worker)
    with qtbot.waitSignal(source.statesReady, timeout=10000) as got:
        source.refresh(cid)
    states = got.args[0].states
    assert states[replies[1].id].memory_tokens == states[replies[0].id].memory_tokens
    assert states[replies[1].id].memory_tokens > replies[1].stats["prompt_tokens"]

    first = _follow_up(qtbot, ctl, cid)
    assert first.model_id == "llama"
    _assert_reused(first, replies[0])

    # The other model's branch: the chat follows its model, loaded already (no load at all).
    loads: list[str] = []
    ctl.worker.loadStarted.connect(loads.append)
    assert _switch_to(qtbot, ctl, replies[1]) == [ModelFollowed(cid, "llama-b", "llama")]
    assert loads == []
    assert ctl.store.get_conversation(cid).model_id == "llama-b"
    second = _follow_up(qtbot, ctl, cid)
    assert second.model_id == "llama-b"
    _assert_reused(second, replies[1])

    # Back on the first model's branch, which continues from its own cache again.
    _switch_to(qtbot, ctl, first)
    third = _follow_up(qtbot, ctl, cid)
    assert third.model_id == "llama"
    _assert_reused(third, first)
    assert third.stats["disk_tokens"] == 0


def test_models_that_do_not_fit_run_one_after_another_and_resume_from_saved_caches(
    qtbot, started, library: Path
) -> None:
    ctl = started(TIGHT)
    cid = _conversation(ctl)
    models = _models(library)
    plan = ctl.compare_plan(cid, models)
    assert not plan.together
    assert plan.notice.startswith("Running one after another: Tiny Llama A ")
    assert " + Tiny Llama B " in plan.notice and "> 700.0 KB free" in plan.notice
    # The shown branch's model (the chat's own) runs last, so it is loaded at the end.
    assert plan.order == (1, 0)

    replies = _compare(qtbot, ctl, cid, models)
    assert [r.model_id for r in replies] == ["llama", "llama-b"]
    assert [r.status for r in replies] == ["complete", "complete"]
    assert [(h.model_id, h.main) for h in ctl.worker.held_models()] == [("llama", True)]
    assert ctl.model_state == "ready"

    first = _follow_up(qtbot, ctl, cid)
    assert first.model_id == "llama"
    _assert_reused(first, replies[0])

    # The other branch's model loads in place of this one, and reads its prefix back from the
    # caches it saved before it was unloaded: nothing of the first turn is computed again.
    _switch_to(qtbot, ctl, replies[1])
    assert [h.model_id for h in ctl.worker.held_models()] == ["llama-b"]
    second = _follow_up(qtbot, ctl, cid)
    assert second.model_id == "llama-b"
    _assert_reused(second, replies[1])
    assert second.stats["disk_tokens"] > 0


def test_a_model_too_big_for_the_room_even_alone_is_refused_before_anything_is_sent(
    qtbot, started, library: Path
) -> None:
    ctl = started(300_000)
    cid = _conversation(ctl)
    notices: list[str] = []
    ctl.notice.connect(notices.append)
    assert not ctl.send_to_models(cid, "Hello there", None, _models(library))
    assert notices and "needs 49" in notices[0] and "only 300.0 KB is free" in notices[0]
    assert ctl.store.active_path(cid) == []


def test_a_blind_compare_hides_the_models_until_one_answer_is_kept(
    qtbot, started, library: Path
) -> None:
    ctl = started(ROOMY)
    cid = _conversation(ctl)
    followed: list[ModelFollowed] = []
    ctl.modelFollowed.connect(followed.append)
    with qtbot.waitSignal(ctl.busyChanged, timeout=60000, check_params_cb=lambda b: not b):
        assert ctl.send_to_models(cid, "Hello there", None, _models(library), blind=True)
    replies = ctl.store.children(ctl.store.active_path(cid)[0].id)
    assert ctl.compare.hidden_ids() == {r.id for r in replies}
    assert followed == []  # nothing is said of the models yet
    # The columns are in an order of chance, the first one shown: neither says which is which.
    assert ctl.store.active_path(cid)[-1].id == replies[0].id
    b = [r.model_id for r in replies].index("llama-b")
    with qtbot.waitSignal(ctl.compare.revealed, timeout=5000):
        assert ctl.compare.keep(b) == replies[b].id
    assert ctl.compare.hidden_ids() == frozenset()
    assert ctl.store.active_path(cid)[-1].id == replies[b].id
    assert followed == [ModelFollowed(cid, "llama-b", "llama")]
    qtbot.waitUntil(lambda: getattr(ctl.model_info, "model_id", None) == "llama-b", timeout=60000)


def test_a_stopped_compare_keeps_the_message_and_what_was_written(
    qtbot, started, library: Path
) -> None:
    ctl = started(TIGHT)
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params={**GREEDY, "max_tokens": 4000}, model_id="llama")
    loads: list[str] = []
    ctl.worker.loadStarted.connect(loads.append)
    with qtbot.waitSignal(ctl.compare.replyUpdated, timeout=60000):
        assert ctl.send_to_models(cid, "Tell me a long story", None, _models(library))
    with qtbot.waitSignal(ctl.busyChanged, timeout=30000, check_params_cb=lambda b: not b):
        ctl.stop()
    user = ctl.store.active_path(cid)[0]
    assert (user.role, user.content) == ("user", "Tell me a long story")
    first, second = ctl.store.children(user.id)
    # Tiny Llama B ran first (the chat's own model runs last when they take turns) and keeps
    # what it wrote; Tiny Llama A never started, and was loaded only afterwards, once, as the
    # model of the branch shown (the chat goes on with it).
    assert second.status == "stopped" and second.content
    assert first.status == "stopped" and first.content == ""
    qtbot.waitUntil(
        lambda: ctl.model_state == "ready" and getattr(ctl.model_info, "model_id", None) == "llama",
        timeout=60000,
    )
    assert [Path(p).name for p in loads] == ["llama-b", "llama"]
