"""Edit › Copy: the text selected in the focused editor, else the last reply."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from tests.ui.window_harness import OFFSCREEN_NOISE, ScriptedEngine, running_app, scripted_worker

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


def test_copy_takes_the_text_selected_in_the_focused_editor(qtbot, tmp_path: Path) -> None:
    worker = scripted_worker(ScriptedEngine([]))
    with running_app(qtbot, tmp_path, tmp_path / "scripted", worker) as app:
        edit = app.window.composer.edit
        edit.setPlainText("a draft to copy")
        edit.setFocus()
        qtbot.waitUntil(lambda: QApplication.focusWidget() is edit)
        edit.selectAll()
        QGuiApplication.clipboard().setText("")
        app.window.menu_actions.copy.trigger()
        assert QGuiApplication.clipboard().text() == "a draft to copy"
