"""The sidebar's two list models: the conversations (the projects' groups first, then the loose
chats; pinned first, then the most recently active, each loose row knowing the date group it
starts) and the search results (one row a chat, with its snippet and match count), and the item
data roles the rows carry for the delegate (a project's heading's are in `project_groups`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QByteArray,
    QMimeData,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtWidgets import QWidget

from ui.sidebar.date_groups import date_group
from ui.sidebar.project_groups import (
    CHATS_MIME,
    Entry,
    InProjectRole,
    project_data,
    sidebar_entries,
)
from ui.text.plain_text import literal
from ui.text.search_snippet import matches_text
from ui.widgets.view_models import ConversationRow, ProjectRow, SearchHit

IdRole = Qt.ItemDataRole.UserRole + 1
PinnedRole = Qt.ItemDataRole.UserRole + 2
SecondLineRole = Qt.ItemDataRole.UserRole + 3
MessageIdRole = Qt.ItemDataRole.UserRole + 4
SpansRole = Qt.ItemDataRole.UserRole + 5  # a search result's snippet as (text, is_match) pieces
MatchCountRole = Qt.ItemDataRole.UserRole + 6
GroupRole = Qt.ItemDataRole.UserRole + 7  # the heading above a row that starts a date group
WarningRole = Qt.ItemDataRole.UserRole + 8  # True: the second line warns (the warning colour)

ModelIndex = QModelIndex | QPersistentModelIndex


class ConversationListModel(QAbstractListModel):
    """The projects, each a group of its chats (folded or not), above the loose conversations;
    in each, pinned chats first, then the most recently active. A chat is dragged onto a
    project (its heading or one of its chats) to move it in, onto a loose chat or the empty
    space below to move it out: `moveRequested(chat id, project id or "")`."""

    renamed = Signal(str, str)
    moveRequested = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[Entry] = []  # what is shown, in order
        self._chats: dict[str, ConversationRow] = {}  # every chat, shown or folded away
        self._projects: list[ProjectRow] = []

    def set_rows(
        self, rows: Sequence[ConversationRow], projects: Sequence[ProjectRow] = ()
    ) -> None:
        self.beginResetModel()
        self._chats = {r.id: r for r in rows}
        self._projects = list(projects)
        self._rows = sidebar_entries(self._projects, rows)
        self.endResetModel()

    def projects(self) -> list[ProjectRow]:
        return list(self._projects)

    def set_collapsed(self, project_id: str, collapsed: bool) -> None:
        """Fold or unfold a project's group (the window keeps the choice)."""
        self._projects = [
            replace(p, collapsed=collapsed) if p.id == project_id else p for p in self._projects
        ]
        self.set_rows(list(self._chats.values()), self._projects)

    def project_of(self, conversation_id: str) -> str:
        """The project a chat belongs to ("" for none, or a chat not listed)."""
        chat = self._chats.get(conversation_id)
        return chat.project_id if chat is not None else ""

    def row_of(self, conversation_id: str) -> int:
        """The chat's row (-1: not listed, or folded away in its project)."""
        return next(
            (
                i
                for i, r in enumerate(self._rows)
                if isinstance(r, ConversationRow) and r.id == conversation_id
            ),
            -1,
        )

    def project_row(self, project_id: str) -> int:
        return next(
            (
                i
                for i, r in enumerate(self._rows)
                if isinstance(r, ProjectRow) and r.id == project_id
            ),
            -1,
        )

    def entry(self, row: int) -> Entry:
        return self._rows[row]

    def conversation(self, row: int) -> ConversationRow:
        entry = self._rows[row]
        assert isinstance(entry, ConversationRow), "a project's heading is no conversation"
        return entry

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008 (Qt's default)
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        if isinstance(row, ProjectRow):
            if role == GroupRole:  # one heading above the projects' groups
                return "Projects" if index.row() == 0 else ""
            return project_data(row, role)
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return row.title
        if role == Qt.ItemDataRole.ToolTipRole:
            return literal(f"{row.title}\nLast active {row.updated_at:%Y-%m-%d %H:%M}")
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{row.title}, pinned" if row.pinned else row.title
        if role == IdRole:
            return row.id
        if role == PinnedRole:
            return row.pinned
        if role == InProjectRole:
            return bool(row.project_id)
        if role == GroupRole:
            return self._group_starting_at(index.row(), row)
        return None

    def _group_starting_at(self, position: int, row: ConversationRow) -> str:
        """The date heading above a loose chat that starts its group ("" otherwise, and for
        chats in a project, which are grouped by it)."""
        if row.project_id:
            return ""
        group = date_group(row.updated_at, row.pinned)
        above = self._rows[position - 1] if position > 0 else None
        continues = (
            isinstance(above, ConversationRow)
            and not above.project_id
            and date_group(above.updated_at, above.pinned) == group
        )
        return "" if continues else group

    def flags(self, index: ModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.ItemIsDropEnabled  # the space below the rows: out of projects
        flags = super().flags(index) | Qt.ItemFlag.ItemIsDropEnabled
        if isinstance(self._rows[index.row()], ProjectRow):
            return flags
        return flags | Qt.ItemFlag.ItemIsEditable | Qt.ItemFlag.ItemIsDragEnabled

    def setData(self, index: ModelIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or role != Qt.ItemDataRole.EditRole:
            return False
        title = str(value).strip()
        row = self._rows[index.row()]
        if not isinstance(row, ConversationRow) or not title or title == row.title:
            return False
        self._rows[index.row()] = self._chats[row.id] = replace(row, title=title)
        self.dataChanged.emit(index, index, [Qt.ItemDataRole.DisplayRole])
        self.renamed.emit(row.id, title)
        return True

    # -- drag and drop: moving chats in and out of projects ------------------------------------

    def supportedDropActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def mimeTypes(self) -> list[str]:
        return [CHATS_MIME]

    def mimeData(self, indexes: Sequence[QModelIndex]) -> QMimeData:
        ids = [self._rows[i.row()] for i in indexes if i.isValid()]
        chats = [r.id for r in ids if isinstance(r, ConversationRow)]
        data = QMimeData()
        data.setData(CHATS_MIME, QByteArray("\n".join(chats).encode()))
        return data

    def dropMimeData(
        self,
        data: QMimeData,
        action: Qt.DropAction,
        row: int,
        column: int,
        parent: ModelIndex,
    ) -> bool:
        if action != Qt.DropAction.MoveAction or not data.hasFormat(CHATS_MIME):
            return False
        target = self._drop_target(row, parent)
        for chat_id in bytes(data.data(CHATS_MIME).data()).decode().split():
            if chat_id in self._chats and self._chats[chat_id].project_id != target:
                self.moveRequested.emit(chat_id, target)
        return True

    def _drop_target(self, row: int, parent: ModelIndex) -> str:
        """The project a drop lands in: the row dropped on, or (between rows) the row above;
        the empty space below every row is out of projects."""
        if parent.isValid():
            position = parent.row()
        elif 0 < row <= len(self._rows):
            position = row - 1
        else:
            return ""
        entry = self._rows[position]
        return entry.id if isinstance(entry, ProjectRow) else entry.project_id


class SearchResultsModel(QAbstractListModel):
    """Search hits, best first; "No chats mention …" as one disabled row when there are none."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._hits: list[SearchHit] = []
        self._empty_text = ""

    def set_hits(self, hits: Sequence[SearchHit], query: str) -> None:
        self.beginResetModel()
        self._hits = list(hits)
        self._empty_text = f"No chats mention “{query}”" if not hits else ""
        self.endResetModel()

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008 (Qt's default)
        return 0 if parent.isValid() else max(len(self._hits), 1 if self._empty_text else 0)

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if not self._hits:
            return self._empty_text if role == Qt.ItemDataRole.DisplayRole else None
        hit = self._hits[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return hit.title
        if role == SecondLineRole:
            return hit.snippet
        if role == Qt.ItemDataRole.ToolTipRole:
            return literal(hit.snippet)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{hit.title}, {matches_text(hit.matches)}: {hit.snippet}"
        if role == IdRole:
            return hit.conversation_id
        if role == MessageIdRole:
            return hit.message_id
        if role == SpansRole:
            return hit.spans
        if role == MatchCountRole:
            return hit.matches
        return None

    def flags(self, index: ModelIndex) -> Qt.ItemFlag:
        if not self._hits:
            return Qt.ItemFlag.NoItemFlags
        return super().flags(index)
