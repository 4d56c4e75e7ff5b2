"""Finishing touches (issue 18 item 9): Continue in a New Chat says what it did, with a way
back; export starts in the folder of the last export."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from tests.ui.window_harness import (
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


def test_export_starts_in_the_folder_of_the_last_export(qtbot, tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "exports"
    target.mkdir()
    offered: list[str] = []

    def save_dialog(_parent, _caption, suggested, _filters):
        offered.append(suggested)
        return str(target / "chat.md"), "Markdown, this branch (*.md)"

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_dialog)
    engine = ScriptedEngine(["A reply."])
    worker = scripted_worker(engine)
    with running_app(qtbot, tmp_path / "data", tmp_path / "scripted", worker) as app:
        send_and_wait(qtbot, app, "Export me")
        app.window.files.ask_export()
        app.window.files.ask_export()
        assert Path(offered[0]).parent == Path.home()
        assert Path(offered[1]) == target / "Export me.json"
        assert (target / "chat.md").read_text(encoding="utf-8").startswith("# Export me")
