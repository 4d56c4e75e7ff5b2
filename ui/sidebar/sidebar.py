"""The conversation sidebar: New chat, search across chats, and the list of conversations.

It shows what the window gives it and reports intents (open, rename, pin, delete, search); the
window does the work, and shows the undo after a delete.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QShortcut,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from ui.sidebar.date_groups import date_group
from ui.text.plain_text import literal
from ui.text.search_snippet import matches_text, paint_snippet
from ui.widgets.delete_confirmation import delete_confirmed
from ui.widgets.icons import ColorRole, themed_icon
from ui.widgets.theme import colors_for, em, is_dark
from ui.widgets.view_models import ConversationRow, SearchHit

SEARCH_DEBOUNCE_MS = 250
IdRole = Qt.ItemDataRole.UserRole + 1
PinnedRole = Qt.ItemDataRole.UserRole + 2
SecondLineRole = Qt.ItemDataRole.UserRole + 3
MessageIdRole = Qt.ItemDataRole.UserRole + 4
SpansRole = Qt.ItemDataRole.UserRole + 5  # a search result's snippet as (text, is_match) pieces
MatchCountRole = Qt.ItemDataRole.UserRole + 6
GroupRole = Qt.ItemDataRole.UserRole + 7  # the heading above a row that starts a date group

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


class _RowDelegate(QStyledItemDelegate):
    """A rounded row: a title, an optional muted second line, and a pin on pinned rows."""

    def sizeHint(self, option: QStyleOptionViewItem, index: ModelIndex) -> QSize:
        metrics = option.fontMetrics
        lines = 3 if index.data(SecondLineRole) else 1
        heading = _heading_height(metrics) if index.data(GroupRole) else 0
        height = metrics.lineSpacing() * lines + metrics.height() + heading
        return QSize(option.rect.width(), height)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: ModelIndex) -> None:
        colors = colors_for(is_dark())
        metrics = option.fontMetrics
        pad = metrics.averageCharWidth()
        rect = option.rect.adjusted(pad // 2, 1, -pad // 2, -1)
        painter.save()
        group = index.data(GroupRole)
        if group:
            # The heading sits above the row's rounded background, small and muted.
            heading = QRect(rect.left() + pad * 3 // 2, rect.top(), rect.width(), 0)
            heading.setHeight(_heading_height(metrics))
            small = QFont(option.font)
            small.setPointSizeF(small.pointSizeF() * 0.85)
            small.setWeight(QFont.Weight.DemiBold)
            painter.setFont(small)
            painter.setPen(QColor(colors.muted))
            bottom = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom
            painter.drawText(heading.adjusted(0, 0, 0, -metrics.height() // 4), bottom, group)
            rect.setTop(heading.bottom() + 1)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        state = option.state
        if state & QStyle.StateFlag.State_Selected:
            background = QColor(colors.selected)
        elif state & QStyle.StateFlag.State_MouseOver:
            background = QColor(colors.hover)
        else:
            background = QColor(Qt.GlobalColor.transparent)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(background)
        painter.drawRoundedRect(rect, pad, pad)

        inner = rect.adjusted(pad * 3 // 2, metrics.height() // 2, -pad, -metrics.height() // 2)
        hovered = state & (QStyle.StateFlag.State_MouseOver | QStyle.StateFlag.State_Selected)
        if group is not None and hovered:  # a conversation, not a search result
            button = menu_button_rect(option.rect, metrics, bool(group))
            painter.setPen(QColor(colors.muted))
            painter.drawText(button, Qt.AlignmentFlag.AlignCenter, "…")
            inner.setRight(button.left() - pad)
        if index.data(PinnedRole):
            side = metrics.height()
            pin = QRect(inner.right() - side, inner.top(), side, side)
            themed_icon("pin").paint(painter, pin)
            inner.setRight(pin.left() - pad)
        title_font = QFont(option.font)
        second = index.data(SecondLineRole)
        if second:
            title_font.setWeight(title_font.Weight.DemiBold)
        painter.setFont(title_font)
        enabled = bool(index.flags() & Qt.ItemFlag.ItemIsEnabled)
        painter.setPen(QColor(colors.text if enabled else colors.muted))
        title_rect = QRect(inner.left(), inner.top(), inner.width(), metrics.lineSpacing())
        count = index.data(MatchCountRole)
        if count:
            # "3 matches" on the right, muted; the title is cut before it.
            painter.save()
            painter.setFont(option.font)
            painter.setPen(QColor(colors.muted))
            label = matches_text(int(count))
            right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            painter.drawText(title_rect, right, label)
            title_rect.setRight(title_rect.right() - metrics.horizontalAdvance(label) - pad)
            painter.restore()
        title = QFontMetrics(title_font).elidedText(
            str(index.data()), Qt.TextElideMode.ElideRight, title_rect.width()
        )
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        painter.drawText(title_rect, align, title)
        spans = index.data(SpansRole)
        if spans:
            second_rect = inner.adjusted(0, metrics.lineSpacing(), 0, 0)
            paint_snippet(painter, second_rect, spans, option.font, (colors.muted, colors.accent))
        elif second:
            painter.setFont(option.font)
            painter.setPen(QColor(colors.muted))
            second_rect = inner.adjusted(0, metrics.lineSpacing(), 0, 0)
            painter.drawText(
                second_rect, Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignTop, str(second)
            )
        painter.restore()


def menu_button_rect(row: QRect, metrics: QFontMetrics, heading: bool) -> QRect:
    """Where a conversation row shows its "…" button (on hover): its right end, level with the
    title. The delegate paints it there and the list opens the menu on a click there."""
    pad = metrics.averageCharWidth()
    top = row.top() + 1 + (_heading_height(metrics) if heading else 0) + metrics.height() // 2
    side = metrics.height()
    right = row.right() - pad // 2 - pad
    return QRect(right - side, top, side, side)


def _heading_height(metrics: QFontMetrics) -> int:
    return metrics.lineSpacing() + metrics.height() // 2


class _ConversationList(QListView):
    """The conversation list: a click on a row's "…" opens its menu, as a right-click does."""

    menuButtonClicked = Signal(QPoint)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        position = event.position().toPoint()
        index = self.indexAt(position)
        if event.button() == Qt.MouseButton.LeftButton and index.isValid():
            heading = bool(index.data(GroupRole))
            button = menu_button_rect(self.visualRect(index), self.fontMetrics(), heading)
            if button.contains(position):
                self.menuButtonClicked.emit(position)
                return
        super().mousePressEvent(event)


def _list_view(name: str, kind: type[QListView] = QListView) -> QListView:
    view = kind()
    view.setObjectName(name)
    view.setAccessibleName(name.replace("List", " list").replace("Results", " results"))
    view.setItemDelegate(_RowDelegate(view))
    view.setMouseTracking(True)
    view.setFrameShape(QListView.Shape.NoFrame)
    view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    return view


class _SearchResultsModel(QAbstractListModel):
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


class Sidebar(QWidget):
    newRequested = Signal()
    conversationActivated = Signal(str)
    renameRequested = Signal(str, str)
    deleteRequested = Signal(str)
    pinRequested = Signal(str, bool)
    exportRequested = Signal(str)
    searchRequested = Signal(str)
    searchHitActivated = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Sidebar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.setAccessibleName("Conversations sidebar")
        self._announce_current = True
        # Rows that arrived while a title was being edited: a model reset would close the
        # editor and lose what was typed, so they wait until it closes.
        self._pending_rows: list[ConversationRow] | None = None

        self.new_button = QPushButton("New chat")
        self.new_button.setObjectName("NewChatButton")
        self.new_button.setIcon(themed_icon("new-chat", ColorRole.Text))
        self.new_button.setAccessibleName("New chat")
        self.new_button.setToolTip("Start a new conversation")
        self.new_button.setCursor(Qt.CursorShape.PointingHandCursor)

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

        self.model = ConversationListModel(self)
        self.list = _list_view("ConversationList", _ConversationList)
        self.list.setModel(self.model)
        self.list.setToolTip("Your conversations: F2 renames, Delete removes")
        self.list.setEditTriggers(
            QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.DoubleClicked
        )
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

        self.results_model = _SearchResultsModel(self)
        self.results = _list_view("SearchResults")
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
        layout.addWidget(self.new_button)
        layout.addWidget(self.search_box)
        layout.addWidget(self._pages, 1)
        self.setMinimumWidth(em(self, 12))

        self.new_button.clicked.connect(self.newRequested)
        self.search_box.textChanged.connect(self._on_search_text)
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

    def set_conversations(self, rows: Sequence[ConversationRow]) -> None:
        if self.list.state() == QAbstractItemView.State.EditingState:
            self._pending_rows = list(rows)
            return
        self._pending_rows = None
        current = self.current_id()
        self.model.set_rows(rows)
        if current is not None:
            self.set_current(current)

    def set_current(self, conversation_id: str | None) -> None:
        """Select a conversation without announcing it (the window already knows)."""
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
        if self._announce_current and current.isValid():
            self.conversationActivated.emit(current.data(IdRole))

    @Slot()
    def _apply_pending_rows(self) -> None:
        # Connected after the view's own closeEditor, so the view is no longer editing here.
        if self._pending_rows is not None:
            self.set_conversations(self._pending_rows)

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
            menu = self.context_menu(index.data(IdRole))
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
        menu.addSeparator()
        delete = menu.addAction(themed_icon("trash"), "Delete…")
        delete.triggered.connect(lambda: self.confirm_delete(conversation_id))
        return menu
