"""A project's chats on a real (tiny) model: every chat starts with the project's instructions,
so a new chat finds them already read (its first reply's stats count them as cached), each reply
is what mlx-lm writes from scratch for the same prompt (transparency), and editing the
instructions changes the prefix of the next turn only: old replies keep their text and the
version they were asked with, and a replay of one asks with that version again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.chat.controller import ChatController
from app.generation.prompt_messages import prompt_messages
from app.generation.worker import InferenceWorker
from app.replay.plan import plan_replay
from app.settings import Preferences
from app.store.conversations import Store
from app.store.project_records import ProjectFields
from inference import LoadedModel, SamplingParams, load_model
from tests.engine_reference import Comparison, check_tokens, reference
from tests.tiny_models import NO_EOS

INSTRUCTIONS = "You are the research team's assistant: cite a source for every claim. " * 6
GREEDY = {"temperature": 0.0, "max_tokens": 4, "seed": 0, "logit_bias": NO_EOS}
# The kinds whose caches reach a new chat differently: attention (any prefix) and a recurrent
# hybrid (only from the checkpoint at the end of the system prompt).
KINDS = ("llama", "qwen3_5")


@pytest.fixture(scope="module", params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def loaded(tiny_models_dir: Path, kind: str) -> LoadedModel:
    return load_model(tiny_models_dir / kind)


@pytest.fixture
def controller(qtbot, tmp_path: Path, tiny_models_dir: Path, kind: str) -> Iterator[ChatController]:
    worker = InferenceWorker()
    ctl = ChatController(
        Store.open(tmp_path / "chats.sqlite3"), worker, Preferences(tmp_path / "settings.ini")
    )
    with qtbot.waitSignal(worker.modelLoaded, timeout=60000):
        ctl.load_model(tiny_models_dir / kind)
    yield ctl
    ctl.shutdown()


def _send(qtbot, ctl: ChatController, cid: int, text: str) -> dict:
    """Send and wait; the reply's stats."""
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000) as finished:
        assert ctl.send(cid, text)
    return finished.args[0].stats


def _check_from_scratch(ctl: ChatController, loaded: LoadedModel, cid: int) -> None:
    """The chat's last reply is what mlx-lm writes from an empty cache for its prompt."""
    store = ctl.store
    path = store.active_path(cid)
    messages = prompt_messages(store, cid, path[:-1])
    assert messages[0] == {"role": "system", "content": store.system_prompt_for(cid)}
    ids = loaded.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    params = SamplingParams(temperature=0.0, max_tokens=4, logit_bias=NO_EOS)
    expected = reference(loaded, ids, params, params.max_tokens)
    got = tuple(path[-1].provenance["token_ids"])
    check_tokens(got, expected, Comparison(), f"chat {cid}")


def test_a_new_chat_in_a_project_finds_its_instructions_already_read(
    qtbot, controller: ChatController, loaded: LoadedModel
) -> None:
    ctl = controller
    project = ctl.projects.create(ProjectFields("Research", INSTRUCTIONS))
    assert project is not None
    system_ids = loaded.tokenizer.apply_chat_template(
        [{"role": "system", "content": INSTRUCTIONS}], tokenize=True
    )
    first = ctl.projects.new_chat(project.id)
    ctl.update_settings(first, params=GREEDY)
    _send(qtbot, ctl, first, "What is a prior?")
    _check_from_scratch(ctl, loaded, first)

    second = ctl.projects.new_chat(project.id)
    ctl.update_settings(second, params=GREEDY)
    stats = _send(qtbot, ctl, second, "And a posterior?")
    # Its very first reply read the instructions from the cache the first chat left.
    assert stats["cached_tokens"] >= len(system_ids) > 100
    _check_from_scratch(ctl, loaded, second)

    # Edited instructions: the next turn reads them (the old prefix no longer matches, so
    # less is cached), the old reply keeps its text and records the version it was asked with.
    before = ctl.store.active_path(second)[-1]
    ctl.projects.update(project.id, ProjectFields("Research", "Answer in one word."))
    stats = _send(qtbot, ctl, second, "Go on.")
    assert stats["cached_tokens"] < len(system_ids)
    _check_from_scratch(ctl, loaded, second)
    after = ctl.store.get_message(before.id)
    assert (after.content, after.provenance["instructions"]["version"]) == (before.content, 1)
    assert ctl.store.active_path(second)[-1].provenance["instructions"]["version"] == 2
    # A replay of the old reply asks with the instructions it was written with.
    assert plan_replay(ctl.store, before.id).messages[0]["content"] == INSTRUCTIONS
