"""Knowledge in a chat, end to end on the real worker and the tiny llama: the person's message is
stored first, its excerpts are retrieved once (for it and the message before) and kept on it
before the reply starts, the reply reads them from the store, and later turns cost nothing:
a follow-up prefills only its own turn, a regenerate reads nothing again, an edit retrieves
afresh on its own branch, and a file changed since says so on the old turn's sources."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.chat.controller import ChatController
from app.chat.knowledge.sources import SourceState
from app.chat.knowledge.turns import STOPPED
from app.generation.knowledge_block import excerpts_of, knowledge_block
from app.generation.knowledge_retrieval import CONTEXT_SHARE
from app.generation.prompt_messages import prompt_messages
from app.generation.worker import InferenceWorker
from app.settings import Preferences
from app.store.conversations import Store
from tests.knowledge_fakes import FakeKnowledge
from tests.tiny_models import NO_EOS

GREEDY = {
    "temperature": 0.0,
    "max_tokens": 4,
    "seed": 0,
    "logit_bias": NO_EOS,
    "knowledge": ["Notes"],
}
GUIDE = "/docs/guide.md"
PARIS = "Paris is the capital of France.\n\nThe Seine runs through Paris."
ROME = "Rome is the capital of Italy.\n\nThe Tiber runs through Rome."


@pytest.fixture
def setup(
    qtbot, tmp_path: Path, llama_path: Path
) -> Iterator[tuple[ChatController, FakeKnowledge]]:
    store = Store.open(tmp_path / "chat.sqlite3")
    worker = InferenceWorker()
    preferences = Preferences(tmp_path / "settings.ini")
    preferences.default_knowledge = ["Notes"]  # what new chats read
    ctl = ChatController(store, worker, preferences, lambda _p: llama_path)
    knowledge = FakeKnowledge({"Notes": {GUIDE: PARIS, "/docs/rome.md": ROME}})
    ctl.knowledge.set_base(knowledge)
    with qtbot.waitSignal(worker.modelLoaded, timeout=60000):
        ctl.start()
    yield ctl, knowledge
    ctl.shutdown()


def _reply(qtbot, ctl: ChatController, action) -> None:
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000):
        assert action()


def _count(qtbot, ctl: ChatController, messages: list[dict]) -> int:
    """The tokens of a prompt of `messages`, counted by the loaded model."""
    counted: list[int] = []
    ctl.worker.call(lambda engine: counted.append(engine.count_prompt_tokens(messages)))
    qtbot.waitUntil(lambda: bool(counted), timeout=10000)
    return counted[0]


def test_excerpts_are_kept_on_the_turn_and_never_read_again(qtbot, setup) -> None:
    ctl, knowledge = setup
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=GREEDY)
    seen: list[tuple[int, bool]] = []  # (messages on the path, whether it has excerpts)

    def look(_search: object) -> None:
        path = ctl.store.active_path(cid)
        seen.append((len(path), bool(excerpts_of(path[0].attachments))))

    ctl.knowledge.turns.searching.connect(look)
    _reply(qtbot, ctl, lambda: ctl.send(cid, "What runs through Paris?"))
    user, reply = ctl.store.active_path(cid)
    # The message was stored alone before the search, its excerpts before the reply began.
    assert seen == [(1, False), (1, True)]
    excerpts = excerpts_of(user.attachments)
    assert [e.text for e in excerpts] == [
        "The Seine runs through Paris.",
        "The Tiber runs through Rome.",
        "Paris is the capital of France.",
    ]
    assert knowledge.retrievals[0][:3] == (("Notes",), "What runs through Paris?", "")
    # The budget is a quarter of the model's context, in its own tokens.
    assert knowledge.retrievals[0][3] == 4096 // CONTEXT_SHARE
    messages = prompt_messages(ctl.store, cid, [user])
    assert messages[-1]["content"].startswith(knowledge_block(user.attachments))
    assert reply.stats["prompt_tokens"] == _count(qtbot, ctl, messages)  # it read exactly this

    _reply(qtbot, ctl, lambda: ctl.send(cid, "And Rome?"))
    follow = ctl.store.active_path(cid)[-1]
    # Retrieved once for the new message, with the one before it; the first turn not again.
    assert [r[1:3] for r in knowledge.retrievals] == [
        ("What runs through Paris?", ""),
        ("And Rome?", "What runs through Paris?"),
    ]
    # The follow-up prefilled only what follows the first turn: that turn, its excerpts and its
    # prompt entire, came from the cache; its own turn (with its own excerpts) was read.
    assert follow.stats["cached_tokens"] >= reply.stats["prompt_tokens"]
    new_turn = ctl.store.active_path(cid)[-2]
    assert excerpts_of(new_turn.attachments)
    alone = _count(qtbot, ctl, prompt_messages(ctl.store, cid, [new_turn]))
    assert follow.stats["prefill_tokens"] >= alone - 2

    _reply(qtbot, ctl, lambda: ctl.regenerate(follow.id))
    again = ctl.store.active_path(cid)[-1]
    assert again.id != follow.id and again.stats["prefill_tokens"] <= 1
    assert len(knowledge.retrievals) == 2  # a regenerate retrieves nothing

    # An edit: a sibling with its own retrieval; the original keeps what it read.
    first = ctl.store.active_path(cid)[0]
    _reply(qtbot, ctl, lambda: ctl.edit(first.id, "Which river runs through Rome?"))
    edited = ctl.store.active_path(cid)[0]
    assert edited.id != first.id and len(knowledge.retrievals) == 3
    assert excerpts_of(edited.attachments)[0].path == "/docs/rome.md"
    assert ctl.store.get_message(first.id).attachments == first.attachments

    # A file changed since: the old turn shows it, its prompt stays as it was.
    ctl.switch_sibling(edited.id, -1)
    path = ctl.store.active_path(cid)
    knowledge.collections["Notes"][GUIDE] = PARIS + "\n\nNew text."
    del knowledge.collections["Notes"]["/docs/rome.md"]
    shown = ctl.knowledge.sources(path)
    first_turn = shown[path[1].id].sources
    assert [s.number for s in first_turn] == [1, 2, 3]
    assert [s.state for s in first_turn] == [
        SourceState.CHANGED,
        SourceState.GONE,
        SourceState.CHANGED,
    ]
    assert shown[path[-1].id].message_id == path[-2].id
    assert prompt_messages(ctl.store, cid, path[:1]) == messages  # the old turn is unchanged


def test_stop_while_searching_keeps_the_message_and_starts_no_reply(qtbot, setup) -> None:
    ctl, knowledge = setup
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=GREEDY)
    gate = threading.Event()
    found = knowledge.retrieve

    def slow(*args, **kwargs):
        gate.wait(10)
        return found(*args, **kwargs)

    knowledge.retrieve = slow  # type: ignore[method-assign]
    notices: list[str] = []
    ctl.notice.connect(notices.append)
    assert ctl.send(cid, "What runs through Paris?")
    assert ctl.is_busy()
    with qtbot.waitSignal(ctl.busyChanged, timeout=5000):
        ctl.stop()
    assert not ctl.is_busy() and notices == [STOPPED]
    done = threading.Event()
    ctl.worker.call(lambda _engine: done.set())
    gate.set()
    qtbot.waitUntil(done.is_set, timeout=10000)
    qtbot.wait(50)  # what the stopped search found would arrive now: it is dropped
    (user,) = ctl.store.active_path(cid)
    assert user.content == "What runs through Paris?" and not excerpts_of(user.attachments)

    # A failing index is said, and the reply is written without knowledge.
    knowledge.retrieve = found  # type: ignore[method-assign]
    knowledge.fail = "the index is locked"
    _reply(qtbot, ctl, lambda: ctl.send(cid, "Still there?"))
    assert any("the index is locked" in n for n in notices)
    assert ctl.store.active_path(cid)[-1].status == "complete"

    # A new chat reads Preferences' default; one that reads nothing never asks the index.
    quiet = ctl.new_conversation()
    assert ctl.store.get_conversation(quiet).params["knowledge"] == ["Notes"]
    ctl.update_settings(quiet, params={k: v for k, v in GREEDY.items() if k != "knowledge"})
    asked = len(knowledge.retrievals)
    _reply(qtbot, ctl, lambda: ctl.send(quiet, "Hello"))
    assert len(knowledge.retrievals) == asked
