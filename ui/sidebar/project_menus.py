"""The sidebar's menus for projects: a project's own (new chat in it, its settings, search in
it, fold, delete), a chat's "Move to project" submenu, and the list search may be narrowed to.

They only report intents through the sidebar's signals; the window does the work.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol

from PySide6.QtWidgets import QComboBox, QMenu, QWidget

from app.qt_signal import QtSignal
from ui.sidebar.list_models import ConversationListModel
from ui.text.plain_text import menu_text
from ui.widgets.icons import themed_icon
from ui.widgets.view_models import ProjectRow

EVERY_CHAT = "All chats"


class MenuHost(Protocol):
    """The sidebar as its project menus use it: its list, the signals they emit for the
    window, narrowing search to a project, and the window the menus belong to."""

    model: ConversationListModel
    newProjectRequested: Final[QtSignal]
    projectToggled: Final[QtSignal]
    projectChatRequested: Final[QtSignal]
    projectSettingsRequested: Final[QtSignal]
    projectDeleteRequested: Final[QtSignal]
    moveRequested: Final[QtSignal]

    def search_in(self, project_id: str) -> None: ...

    def window(self) -> QWidget: ...


def project_menu(sidebar: MenuHost, project_id: str) -> QMenu:
    """The actions on one project (its heading's right-click menu and "…" button)."""
    project = next(p for p in sidebar.model.projects() if p.id == project_id)
    menu = QMenu(sidebar.window())
    menu.setAccessibleName("Project actions")
    menu.addAction(
        themed_icon("new-chat"),
        "New chat in project",
        lambda: sidebar.projectChatRequested.emit(project_id),
    )
    menu.addAction(
        themed_icon("sliders"),
        "Project settings…",
        lambda: sidebar.projectSettingsRequested.emit(project_id),
    )
    menu.addAction(
        themed_icon("search"), "Search in project", lambda: sidebar.search_in(project_id)
    )
    menu.addAction(
        "Expand" if project.collapsed else "Collapse",
        lambda: sidebar.projectToggled.emit(project_id, not project.collapsed),
    )
    menu.addSeparator()
    delete = menu.addAction(themed_icon("trash"), "Delete project…")
    delete.triggered.connect(lambda: sidebar.projectDeleteRequested.emit(project_id))
    return menu


def move_menu(sidebar: MenuHost, conversation_id: str) -> QMenu:
    """ "Move to project": each other project, out of the one it is in, or a new project."""
    current = sidebar.model.project_of(conversation_id)
    menu = QMenu("Move to project", sidebar.window())
    menu.setIcon(themed_icon("folder"))
    menu.setAccessibleName("Move to project")
    for project in sidebar.model.projects():
        if project.id != current:
            menu.addAction(
                menu_text(project.name),
                lambda p=project.id: sidebar.moveRequested.emit(conversation_id, p),
            )
    if current:
        menu.addSeparator()
        menu.addAction(
            "Remove from project", lambda: sidebar.moveRequested.emit(conversation_id, "")
        )
    menu.addSeparator()
    menu.addAction(
        themed_icon("folder-plus"),
        "New project…",
        lambda: sidebar.newProjectRequested.emit(conversation_id),
    )
    return menu


def fill_scopes(box: QComboBox, projects: Sequence[ProjectRow]) -> None:
    """Every chat, then each project; the choice stays while its project does (the sidebar
    shows the box while searching, once there is a project to narrow to)."""
    chosen = box.currentData()
    box.blockSignals(True)
    box.clear()
    box.addItem(EVERY_CHAT, "")
    for project in projects:
        box.addItem(themed_icon("folder"), f"In “{project.name}”", project.id)
    box.setCurrentIndex(max(0, box.findData(chosen)))
    box.blockSignals(False)
    if not projects:
        box.hide()
