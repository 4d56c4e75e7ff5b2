"""The sidebar's two list models: the conversations (pinned first, then the most recently
active, each row knowing the date group it starts) and the search results (one row a chat, with
its snippet and match count), and the item data roles the rows carry for the delegate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import QWidget

from ui.sidebar.date_groups import date_group
from ui.text.plain_text import literal
from ui.text.search_snippet import matches_text
from ui.widgets.view_models import ConversationRow, SearchHit

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
    """Conversations, pinned first, then the most recently active."""

    renamed = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[ConversationRow] = []

    def set_rows(self, rows: Sequence[ConversationRow]) -> None:
        self.beginResetModel()
        self._rows = sorted(rows, key=lambda r: (not r.pinned, -r.updated_at.timestamp()))
        self.endResetModel()

    def row_of(self, conversation_id: str) -> int:
        return next((i for i, r in enumerate(self._rows) if r.id == conversation_id), -1)

    def conversation(self, row: int) -> ConversationRow:
        return self._rows[row]

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008 (Qt's default)
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self._rows[index.row()]
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
        if role == GroupRole:
            group = date_group(row.updated_at, row.pinned)
            above = self._rows[index.row() - 1] if index.row() > 0 else None
            starts = above is None or date_group(above.updated_at, above.pinned) != group
            return group if starts else ""
        return None

    def flags(self, index: ModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return super().flags(index) | Qt.ItemFlag.ItemIsEditable

    def setData(self, index: ModelIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or role != Qt.ItemDataRole.EditRole:
            return False
        title = str(value).strip()
        row = self._rows[index.row()]
        if not title or title == row.title:
            return False
        self._rows[index.row()] = replace(row, title=title)
        self.dataChanged.emit(index, index, [Qt.ItemDataRole.DisplayRole])
        self.renamed.emit(row.id, title)
        return True


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
