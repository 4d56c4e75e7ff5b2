"""The conversation list grouped by date (issue 18 item 6): Pinned, Today, Yesterday, Previous 7
days, then by month; each heading once, above the first row of its group."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from ui.date_groups import date_group
from ui.sidebar import GroupRole, Sidebar
from ui.view_models import ConversationRow


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
    sidebar.set_conversations([
        ConversationRow("a", "Pinned one", pinned=True, updated_at=now - timedelta(days=40)),
        ConversationRow("b", "This morning", updated_at=now),
        ConversationRow("c", "Also today", updated_at=now - timedelta(seconds=5)),
        ConversationRow("d", "Last year", updated_at=datetime(now.year - 1, 5, 3)),
    ])
    model = sidebar.model
    headings = [model.index(r, 0).data(GroupRole) for r in range(model.rowCount())]
    assert headings == ["Pinned", "Today", "", f"May {now.year - 1}"]
    assert model.index(2, 0).data(Qt.ItemDataRole.DisplayRole) == "Also today"
    tall = sidebar.list.sizeHintForRow(1)
    assert tall > sidebar.list.sizeHintForRow(2)  # room for the heading above the row
