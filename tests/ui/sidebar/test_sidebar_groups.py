"""The sidebar (issue 18 item 6): conversations grouped under Pinned, Today, Yesterday,
Previous 7 days, then by month, each heading once above the first row of its group; and a
narrow window folds the sidebar away by itself; a row's "…" button opens its menu."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from tests.ui.window_harness import (
    OFFSCREEN_NOISE,
    ScriptedEngine,
    running_app,
    scripted_worker,
)
from ui.sidebar.date_groups import date_group
from ui.sidebar.list_models import GroupRole
from ui.sidebar.row_delegate import menu_button_rect
from ui.sidebar.sidebar import Sidebar
from ui.widgets.theme import em
from ui.widgets.view_models import ConversationRow

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


def test_date_groups() -> None:
    today = date(2026, 3, 20)
    at = datetime(2026, 3, 20, 9, 0)
    assert date_group(at, pinned=True, today=today) == "Pinned"
    assert date_group(at, pinned=False, today=today) == "Today"
    assert date_group(at - timedelta(days=1), pinned=False, today=today) == "Yesterday"
    assert date_group(at - timedelta(days=6), pinned=False, today=today) == "Previous 7 days"
    assert date_group(at - timedelta(days=7), pinned=False, today=today) == "March 2026"
    assert date_group(datetime(2025, 12, 31), pinned=False, today=today) == "December 2025"


def test_each_heading_shows_once_above_its_first_row(qtbot: QtBot) -> None:
    sidebar = Sidebar()
    qtbot.addWidget(sidebar)
    now = datetime.now()
    sidebar.set_conversations(
        [
            ConversationRow("a", "Pinned one", pinned=True, updated_at=now - timedelta(days=40)),
            ConversationRow("b", "This morning", updated_at=now),
            ConversationRow("c", "Also today", updated_at=now - timedelta(seconds=5)),
            ConversationRow("d", "Last year", updated_at=datetime(now.year - 1, 5, 3)),
        ]
    )
    model = sidebar.model
    headings = [model.index(r, 0).data(GroupRole) for r in range(model.rowCount())]
    assert headings == ["Pinned", "Today", "", f"May {now.year - 1}"]
    assert model.index(2, 0).data(Qt.ItemDataRole.DisplayRole) == "Also today"
    tall = sidebar.list.sizeHintForRow(1)
    assert tall > sidebar.list.sizeHintForRow(2)  # room for the heading above the row


def test_a_narrow_window_folds_the_sidebar_and_a_wide_one_brings_it_back(
    qtbot: QtBot, tmp_path: Path
) -> None:
    worker = scripted_worker(ScriptedEngine([]))
    with running_app(qtbot, tmp_path, tmp_path / "scripted", worker) as app:
        window = app.window
        wide, narrow = em(window, 70), em(window, 40)
        window.resize(wide, 600)
        qtbot.waitUntil(lambda: window.width() == wide)
        assert window.sidebar.isVisible()
        window.resize(narrow, 600)
        qtbot.waitUntil(lambda: not window.sidebar.isVisible())
        assert not window.menu_actions.toggle_sidebar.isChecked()
        window.resize(wide, 600)
        qtbot.waitUntil(window.sidebar.isVisible)

        window.sidebar_commands.toggle()  # hidden by the person: widening does not bring it back
        window.resize(narrow, 600)
        window.resize(wide, 600)
        qtbot.wait(50)
        assert not window.sidebar.isVisible()


def test_the_dots_button_of_a_row_opens_its_menu_with_export(qtbot: QtBot, monkeypatch) -> None:
    opened: list[QMenu] = []
    # Recorded, not shown: an offscreen popup grabs the pointer for the rest of the session.
    monkeypatch.setattr(QMenu, "popup", lambda menu, _position: opened.append(menu))
    sidebar = Sidebar()
    qtbot.addWidget(sidebar)
    sidebar.resize(260, 400)
    sidebar.show()
    qtbot.waitExposed(sidebar)
    sidebar.set_conversations([ConversationRow("a", "A chat", updated_at=datetime.now())])
    view = sidebar.list
    index = sidebar.model.index(0, 0)
    button = menu_button_rect(view.visualRect(index), view.fontMetrics(), True)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=button.center())
    [menu] = opened
    assert [a.text() for a in menu.actions() if a.text()] == [
        "Rename",
        "Pin to top",
        "Export…",
        "Delete…",
    ]
    with qtbot.waitSignal(sidebar.exportRequested) as exported:
        next(a for a in menu.actions() if a.text() == "Export…").trigger()
    assert exported.args == ["a"]
    middle = view.visualRect(index).center()
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=middle)
    assert len(opened) == 1  # elsewhere on the row, a click only selects it
