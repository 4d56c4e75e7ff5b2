"""Titles, messages, file names and errors are shown exactly as written, never as HTML (issue 18
item 1): a chat titled with markup shows that markup literally everywhere its title appears."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6 import QtGui
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox, QPushButton

from tests.ui.window_harness import (
    OFFSCREEN_NOISE,
    ScriptedEngine,
    running_app,
    scripted_worker,
    send_and_wait,
)
from ui.text.plain_text import literal, menu_text, plain_label, show_message

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

HOSTILE = "<font color=red size=6>RED</font><a href=x>lnk</a>"


def seen(text: str, text_format: Qt.TextFormat = Qt.TextFormat.AutoText) -> str:
    """What a person reads where Qt shows `text` in `text_format` (AutoText guesses)."""
    rich = text_format == Qt.TextFormat.RichText or (
        text_format == Qt.TextFormat.AutoText and QtGui.Qt.mightBeRichText(text)
    )
    if not rich:
        return text
    document = QTextDocument()
    document.setHtml(text)
    return document.toPlainText()


def seen_in_label(label: QLabel) -> str:
    return seen(label.text(), label.textFormat())


def seen_in_menu(text: str) -> str:
    """A menu item's text as shown: `&x` marks a shortcut, `&&` is one ampersand."""
    return re.sub(r"&(.)", r"\1", text)


def test_the_helpers_show_markup_literally(qtbot) -> None:
    label = plain_label(HOSTILE)
    qtbot.addWidget(label)
    assert seen_in_label(label) == HOSTILE
    assert seen(literal(HOSTILE + "\nline two")) == HOSTILE + "\nline two"
    assert seen(literal("no markup")) == "no markup"
    assert seen_in_menu(menu_text("Salt & Pepper")) == "Salt & Pepper"


def _answer_next_box(seen_boxes: list[tuple[str, str]], button_text: str) -> None:
    """Record what the next modal message box shows, then click `button_text`."""

    def answer() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(10, answer)
            return
        seen_boxes.append((seen(box.text(), box.textFormat()), seen(box.informativeText())))
        for button in box.findChildren(QPushButton):
            if button.text().replace("&", "") == button_text:
                button.click()
                return

    QTimer.singleShot(0, answer)


def test_a_markup_title_shows_literally_everywhere(qtbot, tmp_path: Path) -> None:
    engine = ScriptedEngine(["Some reply mentioning RED"])
    with running_app(qtbot, tmp_path, tmp_path / "scripted", scripted_worker(engine)) as app:
        window = app.window
        send_and_wait(qtbot, app, f"Say {HOSTILE}")
        cid = window.current_conversation_id
        app.controller.rename_conversation(cid, HOSTILE)
        qtbot.waitUntil(lambda: window.title_label.text() == HOSTILE)

        assert seen_in_label(window.title_label) == HOSTILE  # the chat header
        assert window.windowTitle() == f"{HOSTILE} — Branchwise"
        row = window.sidebar.model.index(window.sidebar.model.row_of(str(cid)), 0)
        assert row.data(Qt.ItemDataRole.DisplayRole) == HOSTILE  # painted as plain text
        assert seen(row.data(Qt.ItemDataRole.ToolTipRole)).startswith(HOSTILE + "\n")

        window.sidebar_commands.search("RED")  # the first message quotes the markup too
        hit = window.sidebar.results.model().index(0, 0)
        assert HOSTILE in seen(hit.data(Qt.ItemDataRole.ToolTipRole))

        boxes: list[tuple[str, str]] = []
        _answer_next_box(boxes, "Delete")
        window.sidebar.confirm_delete(str(cid))
        assert boxes[0][0] == f"Delete “{HOSTILE}”?"
        assert seen_in_label(window.banner.label) == f"Deleted “{HOSTILE}”."
        assert seen_in_menu(window.menu_actions.undo.text()) == f"Undo Delete “{HOSTILE}”"


def test_an_error_with_markup_shows_literally(qtbot) -> None:
    boxes: list[tuple[str, str]] = []
    _answer_next_box(boxes, "OK")
    show_message(None, QMessageBox.Icon.Critical, "Branchwise cannot start", HOSTILE)
    assert boxes == [(HOSTILE, "")]
