"""The conversation sidebar: New chat and New project, search across chats (or one project's),
and the list: the projects' groups above the loose conversations.

It shows what the window gives it and reports intents (open, rename, pin, delete, search, move a
chat in or out of a project, fold a project, its settings, a chat in it, its deletion); the
window does the work, and shows the undo after a delete. Its list models are in `list_models`,
the projects' rows and menus in `project_groups` and `project_menus`, how a row is painted in
`row_delegate`.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QModelIndex, QPoint, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ui.dialogs.delete_confirmation import delete_confirmed
from ui.sidebar.list_models import (
    ConversationListModel,
    IdRole,
    MessageIdRole,
    SearchResultsModel,
)
from ui.sidebar.project_groups import ProjectIdRole
from ui.sidebar.project_menus import fill_scopes, move_menu, project_menu
from ui.sidebar.row_delegate import ConversationListView, list_view
from ui.widgets.icon_button import icon_button
from ui.widgets.icons import ColorRole, themed_icon
from ui.widgets.theme import em
from ui.widgets.view_models import ConversationRow, ProjectRow, SearchHit

SEARCH_DEBOUNCE_MS = 250


class Sidebar(QWidget):
    newRequested = Signal()
    conversationActivated = Signal(str)
    renameRequested = Signal(str, str)
    deleteRequested = Signal(str)
    pinRequested = Signal(str, bool)
    exportRequested = Signal(str)
    searchRequested = Signal(str)
    searchHitActivated = Signal(str, str)
    # Projects: a new one (for the chat named, "" for none), fold one, a chat in one, its
    # settings, its deletion; a chat moved into a project ("" : out of any).
    newProjectRequested = Signal(str)
    projectToggled = Signal(str, bool)
    projectChatRequested = Signal(str)
    projectSettingsRequested = Signal(str)
    projectDeleteRequested = Signal(str)
    moveRequested = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Sidebar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.setAccessibleName("Conversations sidebar")
        self._announce_current = True
        # Rows that arrived while a title was being edited: a model reset would close the
        # editor and lose what was typed, so they wait until it closes.
        self._pending_rows: tuple[list[ConversationRow], list[ProjectRow]] | None = None

        self.new_button = QPushButton("New chat")
        self.new_button.setObjectName("NewChatButton")
        self.new_button.setIcon(themed_icon("new-chat", ColorRole.Text))
        self.new_button.setAccessibleName("New chat")
        self.new_button.setToolTip("Start a new conversation")
        self.new_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.new_project_button = icon_button(
            "folder-plus",
            "New project",
            "Group chats under shared instructions, a default model, preset and tools",
            "NewProjectButton",
        )

        self.search_box = QLineEdit()
        self.search_box.setObjectName("SearchBox")
        self.search_box.setPlaceholderText("Search chats")
        self.search_box.setAccessibleName("Search conversations")
        self.search_box.setToolTip("Find words in every conversation")
        self.search_box.setClearButtonEnabled(True)
        self.search_box.addAction(themed_icon("search"), QLineEdit.ActionPosition.LeadingPosition)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DEBOUNCE_MS)
        self.scope_box = QComboBox()
        self.scope_box.setObjectName("SearchScope")
        self.scope_box.setAccessibleName("Search in")
        self.scope_box.setToolTip("Search every chat, or only one project's")
        self.scope_box.hide()  # shown while searching, once there are projects

        self.model = ConversationListModel(self)
        self.list = list_view("ConversationList", ConversationListView)
        self.list.setModel(self.model)
        self.list.setToolTip("Your conversations: F2 renames, Delete removes")
        self.list.setEditTriggers(
            QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.DoubleClicked
        )
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.setDragEnabled(True)
        self.list.setAcceptDrops(True)
        self.list.setDropIndicatorShown(True)
        self.list.setDragDropMode(QAbstractItemView.DragDropMode.DragDrop)
        self.list.setDefaultDropAction(Qt.DropAction.MoveAction)

        self.results_model = SearchResultsModel(self)
        self.results = list_view("SearchResults", QListView)
        self.results.setModel(self.results_model)
        self.results.setToolTip("Messages that match; click one to open it")
        self.results.setWordWrap(True)

        self._pages = QStackedWidget()
        self._pages.addWidget(self.list)
        self._pages.addWidget(self.results)

        layout = QVBoxLayout(self)
        margin = em(self, 0.6)
        layout.setContentsMargins(margin, margin, margin, margin)
        layout.setSpacing(em(self, 0.5))
        top = QHBoxLayout()
        top.setSpacing(em(self, 0.3))
        top.addWidget(self.new_button, 1)
        top.addWidget(self.new_project_button)
        layout.addLayout(top)
        layout.addWidget(self.search_box)
        layout.addWidget(self.scope_box)
        layout.addWidget(self._pages, 1)
        self.setMinimumWidth(em(self, 12))

        self.new_button.clicked.connect(self.newRequested)
        self.new_project_button.clicked.connect(lambda: self.newProjectRequested.emit(""))
        self.search_box.textChanged.connect(self._on_search_text)
        self.scope_box.activated.connect(self._emit_search)
        self.list.projectToggled.connect(self._on_project_toggled)
        self.model.moveRequested.connect(self.moveRequested)
        self._search_timer.timeout.connect(self._emit_search)
        self.model.renamed.connect(self.renameRequested)
        self.list.selectionModel().currentChanged.connect(self._on_current_changed)
        self.list.itemDelegate().closeEditor.connect(self._apply_pending_rows)
        self.list.customContextMenuRequested.connect(self._show_context_menu)
        self.list.menuButtonClicked.connect(self._show_context_menu)
        self.results.clicked.connect(self._on_hit)
        self.results.activated.connect(self._on_hit)
        QShortcut(
            QKeySequence(QKeySequence.StandardKey.Delete),
            self.list,
            self._delete_current,
            Qt.ShortcutContext.WidgetShortcut,
        )

    # -- public API -------------------------------------------------------------------------

    def set_conversations(
        self, rows: Sequence[ConversationRow], projects: Sequence[ProjectRow] = ()
    ) -> None:
        if self.list.state() == QAbstractItemView.State.EditingState:
            self._pending_rows = (list(rows), list(projects))
            return
        self._pending_rows = None
        current = self.current_id()
        self.model.set_rows(rows, projects)
        fill_scopes(self.scope_box, projects)
        if current is not None:
            self.set_current(current)

    def set_current(self, conversation_id: str | None) -> None:
        """Select a conversation without announcing it (the window already knows); a folded
        project holding it unfolds."""
        project = self.model.project_of(conversation_id) if conversation_id else ""
        if project and conversation_id and self.model.row_of(conversation_id) < 0:
            self._on_project_toggled(project, False)
        row = self.model.row_of(conversation_id) if conversation_id else -1
        self._announce_current = False
        try:
            if row < 0:
                self.list.selectionModel().clearCurrentIndex()
                self.list.clearSelection()
            else:
                self.list.setCurrentIndex(self.model.index(row))
        finally:
            self._announce_current = True

    def current_id(self) -> str | None:
        index = self.list.currentIndex()
        return index.data(IdRole) if index.isValid() else None

    def search_project(self) -> str:
        """The project search is narrowed to ("" for every chat)."""
        return str(self.scope_box.currentData() or "") if self.model.projects() else ""

    def search_in(self, project_id: str) -> None:
        """Narrow search to a project and put the cursor in the search box."""
        self.scope_box.setCurrentIndex(max(0, self.scope_box.findData(project_id)))
        self.scope_box.show()
        self.search_box.setFocus()
        self._emit_search()

    def set_search_results(self, hits: Sequence[SearchHit]) -> None:
        self.results_model.set_hits(hits, self.search_box.text().strip())
        self._pages.setCurrentWidget(self.results)

    def rename(self, conversation_id: str) -> None:
        """Open the inline title editor, as F2 or a double-click does."""
        row = self.model.row_of(conversation_id)
        if row >= 0:
            index = self.model.index(row)
            self.list.setCurrentIndex(index)
            self.list.edit(index)

    def confirm_delete(self, conversation_id: str) -> None:
        """Ask, then emit deleteRequested; the window offers the undo."""
        row = self.model.row_of(conversation_id)
        if row < 0:
            return
        title = self.model.conversation(row).title
        if delete_confirmed(
            self,
            "ConfirmDelete",
            "Delete conversation",
            f"Delete “{title}”?",
            "Its messages and branches go too. You can undo right after.",
            "Delete conversation",
        ):
            self.deleteRequested.emit(conversation_id)

    # -- slots ------------------------------------------------------------------------------

    @Slot(str)
    def _on_search_text(self, text: str) -> None:
        self.scope_box.setVisible(bool(text.strip()) and bool(self.model.projects()))
        if text.strip():
            self._search_timer.start()
        else:
            self._search_timer.stop()
            self._pages.setCurrentWidget(self.list)

    @Slot()
    def _emit_search(self) -> None:
        query = self.search_box.text().strip()
        if query:
            self.searchRequested.emit(query)

    @Slot(QModelIndex, QModelIndex)
    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._announce_current and current.isValid() and current.data(IdRole):
            self.conversationActivated.emit(current.data(IdRole))

    @Slot(str, bool)
    def _on_project_toggled(self, project_id: str, collapsed: bool) -> None:
        """Fold or unfold at once, keeping the selection; the window remembers it."""
        current = self.current_id()
        self._announce_current = False
        try:
            self.model.set_collapsed(project_id, collapsed)
            row = self.model.row_of(current) if current else -1
            heading = self.model.project_row(project_id)
            self.list.setCurrentIndex(self.model.index(row if row >= 0 else heading))
        finally:
            self._announce_current = True
        self.projectToggled.emit(project_id, collapsed)

    @Slot()
    def _apply_pending_rows(self) -> None:
        # Connected after the view's own closeEditor, so the view is no longer editing here.
        if self._pending_rows is not None:
            self.set_conversations(*self._pending_rows)

    @Slot(QModelIndex)
    def _on_hit(self, index: QModelIndex) -> None:
        conversation_id = index.data(IdRole)
        if conversation_id:
            self.searchHitActivated.emit(conversation_id, index.data(MessageIdRole))

    @Slot()
    def _delete_current(self) -> None:
        conversation_id = self.current_id()
        if conversation_id:
            self.confirm_delete(conversation_id)

    @Slot(QPoint)
    def _show_context_menu(self, position: QPoint) -> None:
        index = self.list.indexAt(position)
        if index.isValid():
            project = index.data(ProjectIdRole)
            menu = project_menu(self, project) if project else self.context_menu(index.data(IdRole))
            menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            menu.popup(self.list.viewport().mapToGlobal(position))

    def context_menu(self, conversation_id: str) -> QMenu:
        """Rename, pin or unpin, export, delete: the actions on one conversation (its right-click
        menu and its "…" button)."""
        pinned = self.model.conversation(self.model.row_of(conversation_id)).pinned
        menu = QMenu(self)
        menu.setAccessibleName("Conversation actions")
        menu.addAction("Rename", lambda: self.rename(conversation_id))
        menu.addAction(
            themed_icon("pin"),
            "Unpin" if pinned else "Pin to top",
            lambda: self.pinRequested.emit(conversation_id, not pinned),
        )
        menu.addAction("Export…", lambda: self.exportRequested.emit(conversation_id))
        if self.model.projects():  # none yet: the New project button starts the first
            menu.addMenu(move_menu(self, conversation_id))
        menu.addSeparator()
        delete = menu.addAction(themed_icon("trash"), "Delete…")
        delete.triggered.connect(lambda: self.confirm_delete(conversation_id))
        return menu
