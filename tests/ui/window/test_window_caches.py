"""Caches kept across restarts and chats longer than the context, as a person sees them: the real
app, the real worker and a tiny real model (one that believes its context is short, for the
overflow tests)."""

from __future__ import annotations

import dataclasses
import errno
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import inference.cache.files as cache_files
from app.generation.worker import InferenceWorker
from app.generation.worker_events import ModelLoaded
from app.paths import AppPaths
from app.sizes import format_bytes
from tests.ui.window_harness import (
    OFFSCREEN_NOISE,
    SHORT,
    click_in_next_message_box,
    running_app,
    send_and_wait,
    set_params,
)
from ui.chat.message_state import LEFT_OUT_TIP
from ui.chat.message_widget import MessageWidget
from ui.main import Launched

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

CONTEXT = 240


def on_worker(qtbot: Any, app: Launched, fn: Callable[[Any], Any]) -> Any:
    """Run `fn(engine)` on the worker thread and wait for its result."""
    done: list[Any] = []
    app.controller.worker.call(fn, on_done=done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=30000)
    return done[0]


def saved(qtbot: Any, app: Launched) -> None:
    """Wait until the worker has saved every cache (it saves while idle)."""
    on_worker(qtbot, app, lambda engine: engine.flush())


def small_context_worker(cache_dir: Path) -> InferenceWorker:
    """The real worker and engine, with a model that believes its context is CONTEXT tokens."""

    def factory(path: Path, progress: Any) -> tuple[Any, ModelLoaded]:
        from inference import Engine, load_model

        model = dataclasses.replace(load_model(path), context_length=CONTEXT)
        engine = Engine(model, cache_dir=cache_dir)
        return engine, ModelLoaded(
            model.model_id,
            str(path),
            CONTEXT,
            model_type=model.model_type,
            weights_bytes=model.weights_bytes,
        )

    return InferenceWorker(engine_factory=factory)


def long_chat(app: Launched, turns: int) -> int:
    """A conversation of `turns` exchanges written straight into the store, opened."""
    store = app.store
    cid = app.window.current_conversation_id
    assert cid is not None
    parent = None
    for i in range(turns):
        parent = store.append_message(
            cid, parent, "user", f"Tell me a story about Paris, part {i}."
        ).id
        parent = store.append_message(
            cid, parent, "assistant", f"The cat sat on the mat near the river, part {i}."
        ).id
    app.window.open_conversation(cid)
    app.window._render()
    return cid


def shown_widget(app: Launched, message_id: int) -> MessageWidget:
    """The message's widget, scrolled to (a long chat builds only what is near the view)."""
    chat = app.window.chat_view
    chat.scroll_to_message(str(message_id))
    widget = chat.message_widget(str(message_id))
    assert widget is not None
    return widget


def last_reply_widget(app: Launched) -> MessageWidget:
    return shown_widget(app, app.store.active_path(app.window.current_conversation_id)[-1].id)


def index_owners(data_dir: Path) -> dict[str, list[Any]]:
    indexes = list(AppPaths(data_dir).caches_dir.rglob(cache_files.INDEX))
    assert len(indexes) == 1
    records = json.loads(indexes[0].read_text())["records"]
    return {f"{r['name']}-{r['start']}": r["owners"] for r in records}


def test_after_a_restart_the_first_follow_up_reads_its_prompt_from_disk(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        set_params(app, SHORT)
        send_and_wait(qtbot, app, "Tell me about the sea")
        send_and_wait(qtbot, app, "And the mountains?")
        panel = app.window.status_panel
        qtbot.waitUntil(lambda: panel.last_memory.disk_bytes > 0, timeout=10000)
        text = panel.memory_label.text()
        assert f"in memory, {format_bytes(panel.last_memory.disk_bytes)} on disk" in text

    with running_app(qtbot, tmp_path, llama_path) as app:
        panel = app.window.status_panel
        qtbot.waitUntil(lambda: panel.last_memory.disk_bytes > 0, timeout=10000)
        # A write cut short by the quit left at most a temporary file: opening the folder
        # removed it, and nothing half-written is ever loaded.
        assert not list(AppPaths(tmp_path).caches_dir.rglob("*.tmp.safetensors"))
        assert panel.memory_label.isVisible()
        send_and_wait(qtbot, app, "Which is older?")
        reply = app.store.active_path(app.window.current_conversation_id)[-1]
        assert reply.stats["disk_tokens"] > 20
        assert reply.stats["disk_tokens"] <= reply.stats["cached_tokens"]
        shown = last_reply_widget(app).stats_label.text()
        memory = reply.stats["cached_tokens"] - reply.stats["disk_tokens"]
        assert f"({memory:,} from memory, {reply.stats['disk_tokens']:,} from disk)" in shown


def test_purging_a_deleted_chat_deletes_the_files_only_it_used(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        window = app.window
        set_params(app, SHORT)
        send_and_wait(qtbot, app, "Tell me about the sea")
        doomed = window.current_conversation_id
        window.new_chat()
        set_params(app, SHORT)
        send_and_wait(qtbot, app, "Write a poem about trees")
        kept = window.current_conversation_id
        saved(qtbot, app)
        before = index_owners(tmp_path)
        assert any(owners == [doomed] for owners in before.values())
        assert any(set(owners) == {doomed, kept} for owners in before.values()), "shared"

        window.sidebar_commands.delete_conversation(doomed)
        saved(qtbot, app)
        assert index_owners(tmp_path) == before, "undoable: the files stay until the purge"
        window.close()  # purges the deleted chat, then the worker stops

    after = index_owners(tmp_path)
    assert set(after) == {name for name, owners in before.items() if owners != [doomed]}
    assert all(doomed not in owners for owners in after.values())
    files = {p.stem for p in AppPaths(tmp_path).caches_dir.rglob("*.safetensors")}
    assert files == set(after)


def test_the_overflow_policy_round_trips_through_the_settings_and_reaches_the_engine(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        window = app.window
        set_params(app, SHORT)
        policies: list[str] = []

        def spy(engine: Any) -> None:
            generate = engine.generate

            def recording(*args: Any, overflow: str = "truncate_middle", **kwargs: Any) -> Any:
                policies.append(overflow)
                return generate(*args, overflow=overflow, **kwargs)

            engine.generate = recording

        on_worker(qtbot, app, spy)
        send_and_wait(qtbot, app, "Hello")  # no choice made: the default from Preferences
        dialog = window.open_settings()
        assert dialog.overflow.currentData() == "truncate_middle"
        assert dialog.overflow.currentText() == "Leave out the middle"
        dialog.overflow.setCurrentIndex(dialog.overflow.findData("rolling"))
        dialog.accept()
        assert app.store.get_conversation(window.current_conversation_id).params["overflow"] == (
            "rolling"
        )
        reopened = window.open_settings()
        assert reopened.overflow.currentData() == "rolling"
        reopened.reject()
        send_and_wait(qtbot, app, "Again")

        preferences = window.open_preferences()
        preferences.overflow.setCurrentIndex(preferences.overflow.findData("stop"))
        preferences.accept()
        assert app.controller.preferences.overflow_policy == "stop"
        window.new_chat()
        set_params(app, SHORT)
        fresh = window.open_settings()
        assert fresh.overflow.currentData() == "stop", "a chat without a choice shows the default"
        fresh.reject()
        send_and_wait(qtbot, app, "New chat")
        assert policies == ["truncate_middle", "rolling", "stop"]


def test_messages_left_out_of_the_models_view_are_dimmed_and_say_why(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    worker = small_context_worker(AppPaths(tmp_path).caches_dir)
    with running_app(qtbot, tmp_path, llama_path, worker) as app:
        cid = long_chat(app, 8)
        set_params(app, {**SHORT, "overflow": "truncate_middle"})
        composer = app.window.composer
        qtbot.keyClicks(composer.edit, "And how does it end?")
        qtbot.waitUntil(lambda: "context is full" in composer.notice.text(), timeout=10000)
        assert "left out" in composer.notice.text() and composer.can_send
        with qtbot.waitSignal(
            app.controller.busyChanged, timeout=30000, check_params_cb=lambda busy: not busy
        ):
            composer.send()

        path = app.store.active_path(cid)
        dropped = path[-1].stats["dropped_message_ids"]
        assert dropped and path[-1].status == "complete"
        dimmed = []
        for message in path:
            widget = shown_widget(app, message.id)
            if widget.view.left_out:
                dimmed.append(message.id)
                assert widget._bubble.graphicsEffect() is not None
                assert widget.body.toolTip() == LEFT_OUT_TIP
            else:
                assert widget._bubble.graphicsEffect() is None
                assert widget.body.toolTip() == ""
        assert dimmed == dropped
        assert not set(dropped) & {m.id for m in path[:2]}, "the first exchange is kept"
        assert not set(dropped) & {m.id for m in path[-3:]}, "the latest turns are kept"


def test_a_chat_that_may_not_leave_turns_out_offers_to_continue_in_a_new_chat(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    worker = small_context_worker(AppPaths(tmp_path).caches_dir)
    with running_app(qtbot, tmp_path, llama_path, worker) as app:
        window = app.window
        cid = long_chat(app, 8)
        set_params(app, {**SHORT, "overflow": "stop"})
        send_and_wait(qtbot, app, "And how does it end?")
        banner = window.banner
        assert "too many for this model's context" in banner.text
        assert banner.action_button.text() == "Continue in a New Chat"
        assert app.store.active_path(cid)[-1].status == "error"

        banner.action_button.click()
        new = window.current_conversation_id
        assert new != cid
        assert window.composer.text() == "And how does it end?"
        assert app.store.get_conversation(new).params["overflow"] == "stop"
        send_and_wait(qtbot, app, "")  # Enter sends the carried-over message
        assert app.store.active_path(new)[-1].status == "complete"


def test_a_reply_that_fills_the_context_says_context_full(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    worker = small_context_worker(AppPaths(tmp_path).caches_dir)
    with running_app(qtbot, tmp_path, llama_path, worker) as app:
        set_params(app, {**SHORT, "max_tokens": 1000})
        send_and_wait(qtbot, app, "Hi")
        reply = app.store.active_path(app.window.current_conversation_id)[-1]
        assert reply.stats["finish_reason"] == "context"
        assert reply.stats["prompt_tokens"] + reply.stats["generated_tokens"] == CONTEXT
        label = last_reply_widget(app).stats_label
        assert "context full" in label.text()
        assert "context is full" in label.toolTip()


def test_clear_saved_caches_asks_then_empties_the_disk_and_the_status_bar_says_so(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        window = app.window
        set_params(app, SHORT)
        send_and_wait(qtbot, app, "Tell me about the sea")
        saved(qtbot, app)
        panel = window.status_panel
        qtbot.waitUntil(lambda: panel.last_memory.disk_bytes > 0, timeout=10000)
        dialog = window.open_preferences()
        assert "0 B" not in dialog.disk_used.text()

        click_in_next_message_box("Cancel")
        dialog.clear_saved.click()
        saved(qtbot, app)
        assert panel.last_memory.disk_bytes > 0, "cancelled: nothing deleted"

        click_in_next_message_box("Yes")
        dialog.clear_saved.click()
        qtbot.waitUntil(lambda: panel.last_memory.disk_bytes == 0, timeout=10000)
        saved(qtbot, app)  # nothing in memory is left to be saved again
        assert panel.memory_label.text().endswith("Caches 0 B in memory, 0 B on disk")
        assert dialog.disk_used.text() == "Saved caches now take 0 B."
        assert not list(AppPaths(tmp_path).caches_dir.rglob("*.safetensors"))
        dialog.reject()
        send_and_wait(qtbot, app, "Still there?")  # chats go on, reading their prompt afresh
        reply = app.store.active_path(window.current_conversation_id)[-1]
        assert reply.status == "complete" and reply.stats["cached_tokens"] == 0


def test_the_disk_budget_is_set_in_preferences_and_reaches_the_engine(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        window = app.window
        default = on_worker(qtbot, app, lambda engine: engine.disk_budget_bytes)
        assert 0 < default <= 30 * 2**30
        dialog = window.open_preferences()
        assert dialog.disk_budget.value() == pytest.approx(default / 1e9, abs=0.05)
        dialog.accept()
        assert app.controller.preferences.disk_budget_bytes is None, "unchanged: the default"

        dialog = window.open_preferences()
        dialog.disk_budget.setValue(2.5)
        dialog.accept()
        assert on_worker(qtbot, app, lambda engine: engine.disk_budget_bytes) == 2_500_000_000
    with running_app(qtbot, tmp_path, llama_path) as app:
        assert on_worker(qtbot, app, lambda engine: engine.disk_budget_bytes) == 2_500_000_000


def test_a_full_disk_while_saving_is_told_once_and_chats_go_on(
    qtbot, tmp_path: Path, llama_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts = threading.Event()

    def full(*args: object, **kwargs: object) -> None:
        attempts.set()
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache_files.mx, "save_safetensors", full)
    with running_app(qtbot, tmp_path, llama_path) as app:
        notices: list[str] = []
        app.controller.notice.connect(notices.append)
        set_params(app, SHORT)
        send_and_wait(qtbot, app, "Tell me about the sea")
        qtbot.waitUntil(lambda: bool(notices), timeout=10000)
        assert attempts.is_set()
        assert "No space left on device" in notices[0]
        assert "stay in memory" in app.window.banner.text
        send_and_wait(qtbot, app, "And the mountains?")
        send_and_wait(qtbot, app, "And the rivers?")
        reply = app.store.active_path(app.window.current_conversation_id)[-1]
        assert reply.status == "complete" and reply.stats["cached_tokens"] > 20
        on_worker(qtbot, app, lambda engine: engine.save_pending(0.1))
        assert len(notices) == 1, "told once"
