"""The chat controller driving the real worker and a tiny real model, end to end: the store and the
engine's stats must agree with what a person did."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.chat.controller import BUSY_MESSAGE, ChatController
from app.generation.worker import InferenceWorker
from app.settings import Preferences
from app.store.conversations import InvalidInputError, Store, StoreError
from tests.tiny_models import NO_EOS

# End-of-sequence is banned, so a reply runs to max_tokens (or until stopped) on any random model.
GREEDY = {"temperature": 0.0, "max_tokens": 6, "seed": 0, "logit_bias": NO_EOS}
LONG = {"temperature": 0.0, "max_tokens": 3000, "seed": 0, "logit_bias": NO_EOS}


def _started_controller(qtbot, folder: Path, llama_path: Path) -> ChatController:
    """A controller on a new store in `folder`, its model loaded."""
    store = Store.open(folder / "chat.sqlite3")
    worker = InferenceWorker()
    ctl = ChatController(
        store, worker, Preferences(folder / "settings.ini"), lambda progress: llama_path
    )
    with qtbot.waitSignal(worker.modelLoaded, timeout=60000):
        ctl.start()
    return ctl


@pytest.fixture
def controller(qtbot, tmp_path: Path, llama_path: Path) -> Iterator[ChatController]:
    ctl = _started_controller(qtbot, tmp_path, llama_path)
    yield ctl
    if ctl.worker._thread.is_alive():
        ctl.shutdown()


def _conversation(ctl: ChatController, params: dict = GREEDY) -> int:
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=params)
    return cid


def _send_and_wait(qtbot, ctl: ChatController, cid: int, text: str) -> None:
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000):
        assert ctl.send(cid, text)


def _path(ctl: ChatController, cid: int) -> list[tuple[str, str, str]]:
    return [(m.role, m.content, m.status) for m in ctl.store.active_path(cid)]


def test_whole_session_send_stop_regenerate_edit_switch(qtbot, controller: ChatController) -> None:
    ctl = controller
    cid = _conversation(ctl)
    _send_and_wait(qtbot, ctl, cid, "Hello there")
    path = ctl.store.active_path(cid)
    assert [m.role for m in path] == ["user", "assistant"]
    first_reply = path[-1]
    assert first_reply.status == "complete" and first_reply.content
    assert first_reply.stats["generated_tokens"] == 6
    assert (
        first_reply.stats["cached_tokens"] + first_reply.stats["prefill_tokens"]
        == (first_reply.stats["prompt_tokens"])
    )

    # A follow-up reuses the whole first turn from the cache.
    _send_and_wait(qtbot, ctl, cid, "Tell me more")
    follow_up = ctl.store.active_path(cid)[-1]
    assert follow_up.stats["cached_tokens"] >= first_reply.stats["prompt_tokens"]

    # Regenerate: a sibling reply, and (llama is trimmable) at most one token prefilled.
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000):
        assert ctl.regenerate(follow_up.id)
    regenerated = ctl.store.active_path(cid)[-1]
    assert regenerated.id != follow_up.id and regenerated.parent_id == follow_up.parent_id
    assert regenerated.stats["prefill_tokens"] <= 1
    assert regenerated.content == follow_up.content, "greedy regenerate must be exact"
    siblings, index = ctl.store.siblings(regenerated.id)
    assert (len(siblings), index) == (2, 1)

    # Edit the first message: a new branch; the original stays.
    first_user = ctl.store.active_path(cid)[0]
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000):
        assert ctl.edit(first_user.id, "Hello again")
    assert _path(ctl, cid)[0][1] == "Hello again"
    assert len(ctl.store.active_path(cid)) == 2

    # Switch back to the original first message: its last visited leaf (the regenerated reply).
    edited_first = ctl.store.active_path(cid)[0]
    ctl.switch_sibling(edited_first.id, -1)
    assert ctl.store.active_path(cid)[-1].id == regenerated.id
    ctl.switch_sibling(first_user.id, +1)
    assert ctl.store.active_path(cid)[0].content == "Hello again"

    # Stop mid-stream keeps the partial reply, marked stopped.
    ctl.update_settings(cid, params=LONG)
    with qtbot.waitSignal(ctl.streamUpdated, timeout=30000):
        assert ctl.send(cid, "Write a long story")
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=5000):
        ctl.stop()
    stopped = ctl.store.active_path(cid)[-1]
    assert stopped.status == "stopped"
    assert stopped.content and stopped.stats["generated_tokens"] < 3000


def test_second_request_while_streaming_is_refused_with_a_reason(
    qtbot, controller: ChatController
) -> None:
    ctl = controller
    cid = _conversation(ctl, LONG)
    notices: list[str] = []
    ctl.notice.connect(notices.append)
    with qtbot.waitSignal(ctl.streamUpdated, timeout=30000):
        ctl.send(cid, "First")
    assert not ctl.send(cid, "Second")
    assert notices == [BUSY_MESSAGE]
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=5000):
        ctl.stop()
    assert [m.content for m in ctl.store.active_path(cid) if m.role == "user"] == ["First"]


def test_switching_conversation_while_streaming_keeps_tokens_in_their_message(
    qtbot, controller: ChatController
) -> None:
    ctl = controller
    first = _conversation(ctl, {**GREEDY, "max_tokens": 40})
    second = _conversation(ctl)
    _send_and_wait(qtbot, ctl, second, "Other chat")
    before = _path(ctl, second)
    updates: list[dict] = []
    ctl.streamUpdated.connect(updates.append)
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000):
        ctl.send(first, "Streaming here")
        ctl.open_conversation(second)
    assert _path(ctl, second) == before
    reply = ctl.store.active_path(first)[-1]
    assert reply.status == "complete" and reply.stats["generated_tokens"] == 40
    assert {u.message_id for u in updates} == {reply.id}
    assert updates[-1].text == reply.content


def test_switching_branch_while_streaming_keeps_tokens_in_their_message(
    qtbot, controller: ChatController
) -> None:
    ctl = controller
    cid = _conversation(ctl)
    _send_and_wait(qtbot, ctl, cid, "Question")
    old_reply = ctl.store.active_path(cid)[-1]
    ctl.update_settings(cid, params={**GREEDY, "max_tokens": 40})
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000):
        ctl.regenerate(old_reply.id)
        new_reply_id = ctl.streaming_message_id()
        ctl.switch_sibling(new_reply_id, -1)  # back to the old reply while the new one streams
    assert ctl.store.get_message(old_reply.id).content == old_reply.content
    new_reply = ctl.store.get_message(new_reply_id)
    assert new_reply.status == "complete" and new_reply.stats["generated_tokens"] == 40
    assert ctl.store.active_path(cid)[-1].id == old_reply.id


def test_editing_while_streaming_is_refused_and_changes_nothing(
    qtbot, controller: ChatController
) -> None:
    ctl = controller
    cid = _conversation(ctl, LONG)
    with qtbot.waitSignal(ctl.streamUpdated, timeout=30000):
        ctl.send(cid, "Original")
    user = ctl.store.active_path(cid)[0]
    assert not ctl.edit(user.id, "Changed")
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=5000):
        ctl.stop()
    siblings, _ = ctl.store.siblings(user.id)
    assert [s.content for s in siblings] == ["Original"]


def test_deleting_the_streaming_reply_stops_it_and_no_token_lands_elsewhere(
    qtbot, controller: ChatController
) -> None:
    ctl = controller
    cid = _conversation(ctl)
    _send_and_wait(qtbot, ctl, cid, "Keep me")
    kept = _path(ctl, cid)
    ctl.update_settings(cid, params=LONG)
    with qtbot.waitSignal(ctl.streamUpdated, timeout=30000):
        ctl.send(cid, "Delete me")
    doomed_user = ctl.store.active_path(cid)[-2]
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=5000):
        ctl.delete_message(doomed_user.id)
    qtbot.waitUntil(lambda: not ctl.is_busy(), timeout=5000)
    assert _path(ctl, cid) == kept


def test_closing_during_generation_saves_partial_reply_and_joins(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    ctl = _started_controller(qtbot, tmp_path, llama_path)
    cid = _conversation(ctl, LONG)
    with qtbot.waitSignal(ctl.streamUpdated, timeout=30000):
        ctl.send(cid, "Long one")
    reply_id = ctl.streaming_message_id()
    # A deadline for a hang only: the worker stops within one token of the tiny model
    # (test_worker.py counts them), ten times the 2 s the window waits on quitting.
    assert ctl.shutdown(timeout_s=20.0), "the worker thread never ended"
    reopened = Store.open(tmp_path / "chat.sqlite3")
    reply = reopened.get_message(reply_id)
    reopened.close()
    assert reply.status == "stopped" and reply.content


def test_prompt_longer_than_context_reports_error_and_keeps_serving(
    qtbot, controller: ChatController
) -> None:
    ctl = controller
    cid = _conversation(ctl)
    notices: list[str] = []
    ctl.notice.connect(notices.append)
    with qtbot.waitSignal(ctl.worker.generationFailed, timeout=60000):
        ctl.send(cid, "word " * 6000)
    assert notices and "context" in notices[-1].lower()
    failed = ctl.store.active_path(cid)[-1]
    assert failed.status == "error" and failed.error
    long_message = ctl.store.active_path(cid)[0]
    assert long_message.content == "word " * 6000
    # The person shortens the message: the worker still serves, and the long one is kept.
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000):
        assert ctl.edit(long_message.id, "Short")
    assert _path(ctl, cid)[-1][2] == "complete"
    assert ctl.store.get_message(long_message.id).content == "word " * 6000


def test_token_count_reports_prompt_size(qtbot, controller: ChatController) -> None:
    ctl = controller
    cid = _conversation(ctl)
    with qtbot.waitSignal(ctl.tokenCount, timeout=10000) as counted:
        ctl.counts.request_token_count(cid, "How many tokens is this?")
    assert counted.args[0].count > 5
    assert counted.args[0].context_length == 4096


def test_deleting_a_conversation_frees_its_caches(qtbot, controller: ChatController) -> None:
    ctl = controller
    cid = _conversation(ctl)
    memory: list[dict] = []
    ctl.memoryChanged.connect(memory.append)
    _send_and_wait(qtbot, ctl, cid, "Remember this")
    qtbot.waitUntil(lambda: bool(memory) and memory[-1].cache_bytes > 0, timeout=5000)
    ctl.delete_conversation(cid)
    qtbot.waitUntil(lambda: memory[-1].cache_bytes == 0, timeout=5000)
    ctl.restore_conversation(cid)
    assert [m.role for m in ctl.store.active_path(cid)] == ["user", "assistant"]


def test_closing_during_generation_keeps_the_whole_partial_reply_and_its_stats(
    qtbot, tmp_path: Path, controller: ChatController
) -> None:
    ctl = controller
    cid = _conversation(ctl, LONG)
    # Called on the worker thread as the result is emitted, before the GUI thread would see it.
    finished: list[dict] = []
    ctl.worker.generationFinished.connect(finished.append, Qt.ConnectionType.DirectConnection)
    with qtbot.waitSignal(ctl.streamUpdated, timeout=30000):
        ctl.send(cid, "Long one")
    reply_id = ctl.streaming_message_id()
    assert ctl.shutdown(timeout_s=2.0)
    reopened = Store.open(tmp_path / "chat.sqlite3")
    reply = reopened.get_message(reply_id)
    reopened.close()
    assert len(finished) == 1
    assert reply.content == finished[0].text
    assert reply.stats["finish_reason"] == "cancelled"
    assert reply.stats["generated_tokens"] == finished[0].stats["generated_tokens"]


def test_a_failed_write_while_streaming_loses_no_text(
    qtbot, monkeypatch: pytest.MonkeyPatch, controller: ChatController
) -> None:
    """The disk is full for a moment: the person is told once, the reply keeps streaming and
    its whole text is saved when it ends."""
    ctl = controller
    cid = _conversation(ctl, LONG)
    notices: list[str] = []
    ctl.notice.connect(notices.append)
    failed_writes: list[int] = []

    def disk_full(message_id: int, content: str, reasoning: str = "") -> None:
        failed_writes.append(message_id)
        raise StoreError("The conversation database could not be used: database or disk is full.")

    monkeypatch.setattr(ctl.store, "update_streaming", disk_full)
    with qtbot.waitSignal(ctl.streamUpdated, timeout=30000):
        ctl.send(cid, "Long one")
    qtbot.waitUntil(lambda: bool(failed_writes), timeout=5000)
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=5000) as finished:
        ctl.stop()
    qtbot.waitUntil(lambda: not ctl.is_busy(), timeout=5000)
    reply = ctl.store.active_path(cid)[-1]
    assert reply.status == "stopped"
    assert reply.content == finished.args[0].text
    assert [n for n in notices if "could not be saved" in n] == [notices[0]]
    assert len(failed_writes) <= 2, "a failed write is retried once an interval, not per token"


class _ThreadCheckingPreferences(Preferences):
    """QSettings is reentrant, not thread-safe: only the GUI thread may read the budget."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.read_on: set[str] = set()

    @property
    def cache_budget_bytes(self) -> int:
        self.read_on.add(threading.current_thread().name)
        return Preferences.cache_budget_bytes.fget(self)

    @cache_budget_bytes.setter
    def cache_budget_bytes(self, value: int) -> None:
        Preferences.cache_budget_bytes.fset(self, value)


def test_loaded_model_gets_the_budget_and_settings_stay_on_the_gui_thread(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    preferences = _ThreadCheckingPreferences(tmp_path / "settings.ini")
    preferences.cache_budget_bytes = 12345
    worker = InferenceWorker()
    ctl = ChatController(Store.open(tmp_path / "chat.sqlite3"), worker, preferences)
    with qtbot.waitSignal(worker.modelLoaded, timeout=60000):
        ctl.load_model(llama_path)
    budgets: list[int] = []
    worker.call(lambda engine: engine.cache_budget_bytes, on_done=budgets.append)
    qtbot.waitUntil(lambda: bool(budgets), timeout=5000)
    ctl.shutdown()
    assert budgets == [12345]
    assert preferences.read_on == {threading.main_thread().name}


def test_a_refused_delete_of_the_streaming_branch_keeps_the_reply(
    qtbot, monkeypatch: pytest.MonkeyPatch, controller: ChatController
) -> None:
    ctl = controller
    cid = _conversation(ctl, LONG)
    notices: list[str] = []
    ctl.notice.connect(notices.append)

    def disk_full(message_id: int) -> None:
        raise StoreError("The conversation database could not be used: database or disk is full.")

    monkeypatch.setattr(ctl.store, "delete_message", disk_full)
    with qtbot.waitSignal(ctl.streamUpdated, timeout=30000):
        ctl.send(cid, "Delete me")
    user = ctl.store.active_path(cid)[-2]
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=5000) as finished:
        ctl.delete_message(user.id)
    qtbot.waitUntil(lambda: not ctl.is_busy(), timeout=5000)
    assert notices == ["The conversation database could not be used: database or disk is full."]
    reply = ctl.store.active_path(cid)[-1]
    assert (reply.status, reply.content) == ("stopped", finished.args[0].text)


def test_switching_to_a_message_shows_its_branch_and_announces_it(
    qtbot, controller: ChatController
) -> None:
    ctl = controller
    cid = ctl.new_conversation()
    root = ctl.store.append_message(cid, None, "user", "Plan a trip")
    hidden = ctl.store.append_message(cid, root.id, "assistant", "Visit the lake")
    ctl.store.edit_message(root.id, "Plan a cheaper trip")  # now the active branch
    with qtbot.waitSignal(ctl.conversationChanged, timeout=1000) as changed:
        assert ctl.switch_to_message(hidden.id)
    assert changed.args == [cid]
    assert [m.id for m in ctl.store.active_path(cid)] == [root.id, hidden.id]

    notices: list[str] = []
    ctl.notice.connect(notices.append)
    with qtbot.assertNotEmitted(ctl.conversationChanged):
        assert not ctl.switch_to_message(hidden.id + 1000)
    assert notices == [f"There is no message with id {hidden.id + 1000}."]
    assert ctl.store.active_path(cid)[-1].id == hidden.id


def test_importing_a_conversation_lists_it_and_bad_data_adds_nothing(
    qtbot, controller: ChatController
) -> None:
    ctl = controller
    cid = ctl.new_conversation()
    ctl.store.append_message(cid, None, "user", "Remember this")
    data = ctl.store.export_json(cid)
    with qtbot.waitSignal(ctl.conversationsChanged, timeout=1000):
        imported = ctl.import_conversation(data)
    assert imported.id != cid
    assert [m.content for m in ctl.store.active_path(imported.id)] == ["Remember this"]

    before = ctl.store.list_conversations()
    with qtbot.assertNotEmitted(ctl.conversationsChanged), pytest.raises(InvalidInputError):
        ctl.import_conversation({"not": "an export"})
    assert ctl.store.list_conversations() == before


def test_purging_makes_a_deletion_final(qtbot, controller: ChatController) -> None:
    ctl = controller
    kept, deleted = ctl.new_conversation(), ctl.new_conversation()
    ctl.delete_conversation(deleted)
    assert ctl.purge_deleted() == 1
    notices: list[str] = []
    ctl.notice.connect(notices.append)
    ctl.restore_conversation(deleted)
    assert notices == [f"There is no deleted conversation with id {deleted}."]
    assert [c.id for c in ctl.store.list_conversations()] == [kept]
