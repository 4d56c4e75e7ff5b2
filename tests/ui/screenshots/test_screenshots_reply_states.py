"""Screenshots of the views issue 18 changed, light and dark, into tests/screenshots/: a reply
reading a long prompt (its switcher already showing), "Stopping…", a cut-off reply with
Continue, a chat whose title is markup (shown literally) and search results (the conversation
settings: test_screenshots_defaults)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.reply_engines import CutOffEngine, LongPromptEngine
from tests.ui.screenshots.test_screenshots import _save
from tests.ui.window_harness import (
    OFFSCREEN_NOISE,
    running_app,
    scripted_worker,
    send_and_wait,
)

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

HOSTILE = "<font color=red size=6>RED</font><a href=x>lnk</a>"


def _both_themes(window, name: str) -> None:
    for theme in ("light", "dark"):
        window.set_theme(theme)
        _save(window, f"{name}-{theme}")
    window.set_theme("light")


def test_screenshots_of_reading_stopping_and_a_markup_title(qtbot, tmp_path: Path) -> None:
    engine = LongPromptEngine(["The first answer, in full.", "never shown"])
    with running_app(qtbot, tmp_path, tmp_path / "demo-model", scripted_worker(engine)) as app:
        window = app.window
        window.resize(1000, 640)
        send_and_wait(qtbot, app, "Summarise this long report for me, please.")
        app.controller.rename_conversation(window.current_conversation_id, HOSTILE)
        qtbot.waitUntil(lambda: window.title_label.text() == HOSTILE)
        window.branches.regenerate_last()
        qtbot.waitUntil(lambda: "left" in _badge(app), timeout=10000)
        _both_themes(window, "reading-prompt")
        window.stream.request_stop()
        _both_themes(window, "stopping")
        qtbot.waitUntil(lambda: not app.controller.is_busy(), timeout=5000)


def test_screenshots_of_continue(qtbot, tmp_path: Path) -> None:
    engine = CutOffEngine(["Once upon a time, on a rocky shore, there lived a keeper who"])
    with running_app(qtbot, tmp_path, tmp_path / "demo-model", scripted_worker(engine)) as app:
        window = app.window
        window.resize(1000, 640)
        send_and_wait(qtbot, app, "Tell me a story about a lighthouse.")
        _both_themes(window, "continue")
        window.sidebar.search_box.setText("keeper")
        window.sidebar_commands.search("keeper")
        _both_themes(window, "search")


def _badge(app) -> str:
    widget = app.window.chat_view.message_widget(str(app.controller.streaming_message_id()))
    return "" if widget is None or widget.badge is None else widget.badge.text()
