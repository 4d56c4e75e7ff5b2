"""Continue in a New Chat says what it did, with a way back (issue 18 item 9)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from tests.gui.window_harness import (
    OFFSCREEN_NOISE,
    ScriptedEngine,
    running_app,
    scripted_worker,
    send_and_wait,
)

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


def test_continue_in_a_new_chat_says_what_it_did_and_leads_back(qtbot, tmp_path: Path) -> None:
    engine = ScriptedEngine(["A reply."])
    with running_app(qtbot, tmp_path, tmp_path / "scripted", scripted_worker(engine)) as app:
        window = app.window
        send_and_wait(qtbot, app, "Shared start")
        original = window.current_conversation_id
        window.menu_actions.fork.trigger()
        assert window.current_conversation_id != original
        assert window.banner.text == (
            "Copied this branch (2 messages) into a new chat; the original is unchanged."
        )
        qtbot.mouseClick(window.banner.action_button, Qt.MouseButton.LeftButton)
        assert window.current_conversation_id == original
