"""Projects in the sidebar: collapsible groups above the loose chats, a click or a key folds
one, chats dragged in and out (the model's drop) or moved by their menu, and search narrowed to
a project."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QMenu
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from ui.sidebar.list_models import GroupRole, IdRole
from ui.sidebar.project_groups import CountRole, InProjectRole, ProjectIdRole
from ui.sidebar.sidebar import Sidebar
from ui.widgets.view_models import ConversationRow, ProjectRow

NOW = datetime.now()
PROJECTS = [ProjectRow("1", "Garden", chats=2), ProjectRow("2", "Trip", collapsed=True, chats=1)]
ROWS = [
    ConversationRow("a", "Tomatoes", updated_at=NOW - timedelta(hours=2), project_id="1"),
    ConversationRow("b", "Roses", updated_at=NOW, project_id="1"),
    ConversationRow("c", "Lisbon", updated_at=NOW, project_id="2"),
    ConversationRow("d", "Loose one", updated_at=NOW - timedelta(days=40)),
    ConversationRow("e", "Loose two", updated_at=NOW),
]


@pytest.fixture
def sidebar(qtbot: QtBot) -> Sidebar:
    widget = Sidebar()
    qtbot.addWidget(widget)
    widget.resize(300, 500)
    widget.set_conversations(ROWS, PROJECTS)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _shown(sidebar: Sidebar) -> list[str]:
    model = sidebar.model
    return [
        f"[{model.index(r).data()}]"
        if model.index(r).data(ProjectIdRole)
        else model.index(r).data()
        for r in range(model.rowCount())
    ]


def test_projects_are_groups_above_the_loose_chats(qtbot: QtBot, sidebar: Sidebar) -> None:
    ModelTester(qtbot).check(sidebar.model)
    assert _shown(sidebar) == ["[Garden]", "Roses", "Tomatoes", "[Trip]", "Loose two", "Loose one"]
    model = sidebar.model
    headings = [model.index(r).data(GroupRole) for r in range(model.rowCount())]
    assert headings[0] == "Projects" and headings[4] == "Today" and headings[3] == ""
    assert model.index(0).data(CountRole) == 2 and model.index(0).data(IdRole) is None
    assert model.index(1).data(InProjectRole) and not model.index(4).data(InProjectRole)

    # A click on a heading folds or unfolds its group; the window hears it to keep the choice.
    view = sidebar.list
    with qtbot.waitSignal(sidebar.projectToggled) as toggled:
        qtbot.mouseClick(
            view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(model.index(3)).center()
        )
    assert toggled.args == ["2", False]
    assert "Lisbon" in _shown(sidebar)
    view.setCurrentIndex(model.index(0))
    with qtbot.waitSignal(sidebar.projectToggled) as toggled:
        qtbot.keyClick(view, Qt.Key.Key_Left)
    assert toggled.args == ["1", True] and "Roses" not in _shown(sidebar)
    # Opening a chat folded away unfolds its project.
    sidebar.set_current("a")
    assert sidebar.current_id() == "a" and "Roses" in _shown(sidebar)


def test_chats_are_dragged_in_and_out_of_projects(qtbot: QtBot, sidebar: Sidebar) -> None:
    model = sidebar.model
    moves: list[tuple[str, str]] = []
    sidebar.moveRequested.connect(lambda chat, project: moves.append((chat, project)))

    def drop(chat: str, row: int, parent: QModelIndex) -> None:
        data = model.mimeData([model.index(model.row_of(chat))])
        assert model.dropMimeData(data, Qt.DropAction.MoveAction, row, 0, parent)

    drop("e", -1, model.index(0))  # onto the Garden heading
    drop("a", -1, model.index(model.row_of("d")))  # onto a loose chat: out of its project
    drop("b", -1, QModelIndex())  # onto the empty space below every row: out
    drop("d", model.row_of("a") + 1, QModelIndex())  # between rows: the project of the row above
    drop("a", -1, model.index(0))  # already there: nothing to do
    assert moves == [("e", "1"), ("a", ""), ("b", ""), ("d", "1")]


def test_a_chats_menu_moves_it_and_search_narrows_to_a_project(
    qtbot: QtBot, sidebar: Sidebar
) -> None:
    menu = sidebar.context_menu("a")
    move = next(a.menu() for a in menu.actions() if a.text() == "Move to project")
    assert isinstance(move, QMenu)
    assert [a.text() for a in move.actions() if a.text()] == [
        "Trip",
        "Remove from project",
        "New project…",
    ]
    with qtbot.waitSignal(sidebar.moveRequested) as moved:
        next(a for a in move.actions() if a.text() == "Remove from project").trigger()
    assert moved.args == ["a", ""]
    with qtbot.waitSignal(sidebar.newProjectRequested) as asked:
        next(a for a in move.actions() if a.text() == "New project…").trigger()
    assert asked.args == ["a"]

    assert sidebar.search_project() == ""
    sidebar.search_box.setText("tomato")
    with qtbot.waitSignal(sidebar.searchRequested) as searched:
        sidebar.search_in("1")
    assert searched.args == ["tomato"] and sidebar.search_project() == "1"
    assert sidebar.scope_box.isVisible() and sidebar.scope_box.currentText() == "In “Garden”"
