"""Stop during a long prompt (issue 18 item 2): the reply says how far the prompt has been read
and how long the rest should take, "Stopping…" until the worker confirms, and a reply stopped
before any text is not kept as an empty message."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from tests.ui.reply_engines import CutOffEngine, LongPromptEngine
from tests.ui.window_harness import (
    OFFSCREEN_NOISE,
    running_app,
    scripted_worker,
    send_and_wait,
)
from ui.chat.reply_progress import PrefillEstimate, reading_note

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


def test_the_estimate_follows_the_measured_speed() -> None:
    now = [0.0]
    estimate = PrefillEstimate(clock=lambda: now[0])
    assert estimate.note(0, 2000) == "Reading the prompt… 0 / 2,000 tokens"
    now[0] = 0.1
    assert estimate.note(300, 2000) == "Reading the prompt… 300 / 2,000 tokens"  # too soon
    now[0] = 2.0
    assert estimate.note(500, 2000) == "Reading the prompt… 500 / 2,000 tokens · about 6 s left"
    now[0] = 3.9
    assert estimate.note(975, 2000).endswith("about 4 s left")
    assert estimate.note(2000, 2000) == ""  # read: the reply's text shows next
    assert reading_note(10, 20, 0.3).endswith("under a second left")
    assert reading_note(10, 20_000, 600).endswith("about 10 min left")


def _streaming_badge(app) -> str:
    widget = app.window.chat_view.message_widget(str(app.controller.streaming_message_id()))
    return "" if widget is None or widget.badge is None else widget.badge.text()


def test_stop_during_a_long_prompt_says_stopping_and_keeps_no_empty_reply(
    qtbot, tmp_path: Path
) -> None:
    engine = LongPromptEngine(["First answer.", "never shown"])
    with running_app(qtbot, tmp_path, tmp_path / "scripted", scripted_worker(engine)) as app:
        window = app.window
        send_and_wait(qtbot, app, "Hello", timeout_ms=30000)
        cid = window.current_conversation_id
        first = app.store.active_path(cid)[-1]
        assert first.content == "First answer."

        window.branches.regenerate_last()
        qtbot.waitUntil(lambda: "left" in _streaming_badge(app), timeout=10000)
        assert re.fullmatch(
            r"Reading the prompt… [\d,]+ / 2,000 tokens · (about \d s|under a second) left",
            _streaming_badge(app),
        )

        # The new version shows its switcher at once: the way back to the first answer.
        streaming = window.chat_view.message_widget(str(app.controller.streaming_message_id()))
        assert streaming.nav is not None and streaming.nav.isVisible()
        assert streaming.nav.position_text == "2/2"

        qtbot.keyClick(window.composer.edit, Qt.Key.Key_Escape)
        assert _streaming_badge(app) == "Stopping…"
        assert not window.composer.button.isEnabled()
        assert window.composer.button.toolTip() == "Stopping…"
        qtbot.waitUntil(lambda: not app.controller.is_busy(), timeout=5000)

        # The reply stopped before any text went away: the first answer is shown again, alone.
        path = app.store.active_path(cid)
        assert [m.id for m in path] == [path[0].id, first.id]
        assert len(app.store.siblings(first.id)[0]) == 1
        widget = window.chat_view.message_widget(str(first.id))
        assert widget is not None and (widget.nav is None or widget.nav.isHidden())
        assert window.composer.button.isEnabled() is False  # empty draft: nothing to send
        assert window.composer.button.toolTip() == "Send message (Enter)"


def test_continue_writes_more_of_a_cut_off_reply_as_a_new_version(qtbot, tmp_path: Path) -> None:
    engine = CutOffEngine(["Once upon a time", ", on a rocky shore, a keeper lived."])
    with running_app(qtbot, tmp_path, tmp_path / "scripted", scripted_worker(engine)) as app:
        window = app.window
        send_and_wait(qtbot, app, "Tell me a story")
        cid = window.current_conversation_id
        cut = app.store.active_path(cid)[-1]
        widget = window.chat_view.message_widget(str(cut.id))
        assert widget.continue_button is not None and widget.continue_button.isVisible()

        with qtbot.waitSignal(
            app.controller.busyChanged, timeout=10000, check_params_cb=lambda busy: not busy
        ):
            qtbot.mouseClick(widget.continue_button, Qt.MouseButton.LeftButton)

        reply = app.store.active_path(cid)[-1]
        assert reply.content == "Once upon a time, on a rocky shore, a keeper lived."
        assert engine.continued == [False, True]
        assert engine.prompts[-1][-1] == {"role": "assistant", "content": "Once upon a time"}
        assert [m.id for m in app.store.siblings(reply.id)[0]] == [cut.id, reply.id]
        finished = window.chat_view.message_widget(str(reply.id))
        assert not finished.continue_button.isVisible()  # it ended by itself this time
