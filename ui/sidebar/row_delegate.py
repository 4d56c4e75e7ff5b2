"""How a sidebar row looks and where its parts are: the delegate that paints a conversation
or search-result row (date heading, rounded background, pin, "…" button, title, match count,
snippet), and the list view that opens a row's menu from a click on its "…" button.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QKeyEvent, QMouseEvent, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
)

from ui.sidebar.list_models import (
    GroupRole,
    MatchCountRole,
    ModelIndex,
    PinnedRole,
    SecondLineRole,
    SpansRole,
    WarningRole,
)
from ui.sidebar.project_groups import CollapsedRole, InProjectRole, ProjectIdRole, paint_heading
from ui.text.search_snippet import matches_text, paint_snippet
from ui.widgets.icons import themed_icon
from ui.widgets.theme import colors_for, is_dark


class RowDelegate(QStyledItemDelegate):
    """A rounded row: a title, an optional muted second line (in the warning colour where it
    warns), and a pin on pinned rows."""

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
        if index.data(ProjectIdRole):
            paint_heading(painter, option, index, inner, colors)
            painter.restore()
            return
        if index.data(InProjectRole):  # under its project's heading, indented past its icon
            inner.setLeft(inner.left() + metrics.height() + pad)
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
            painter.setPen(QColor(colors.warning if index.data(WarningRole) else colors.muted))
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


class ConversationListView(QListView):
    """The conversation list: a click on a row's "…" opens its menu, as a right-click does; a
    click on a project's heading (or Space, Enter, Left, Right on it) folds or unfolds its
    group; chats are dragged onto a project to move them in, or below the rest to move them
    out."""

    menuButtonClicked = Signal(QPoint)
    projectToggled = Signal(str, bool)  # project id, collapsed

    def mousePressEvent(self, event: QMouseEvent) -> None:
        position = event.position().toPoint()
        index = self.indexAt(position)
        if event.button() == Qt.MouseButton.LeftButton and index.isValid():
            heading = bool(index.data(GroupRole))
            button = menu_button_rect(self.visualRect(index), self.fontMetrics(), heading)
            if button.contains(position):
                self.menuButtonClicked.emit(position)
                return
            if index.data(ProjectIdRole):
                self.setCurrentIndex(index)
                self._toggle(index, not index.data(CollapsedRole))
                return
        super().mousePressEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        index = self.currentIndex()
        key = event.key()
        if index.isValid() and index.data(ProjectIdRole) and key in _FOLD_KEYS:
            collapsed = bool(index.data(CollapsedRole))
            wanted = {Qt.Key.Key_Left: True, Qt.Key.Key_Right: False}.get(key, not collapsed)
            if wanted != collapsed:
                self._toggle(index, wanted)
            return
        super().keyPressEvent(event)

    def _toggle(self, index: QModelIndex, collapsed: bool) -> None:
        self.projectToggled.emit(str(index.data(ProjectIdRole)), collapsed)


_FOLD_KEYS = (
    Qt.Key.Key_Space,
    Qt.Key.Key_Return,
    Qt.Key.Key_Enter,
    Qt.Key.Key_Left,
    Qt.Key.Key_Right,
)


def list_view[V: QListView](name: str, kind: type[V]) -> V:
    """A sidebar list of `kind` named `name`, painted by the row delegate."""
    view = kind()
    view.setObjectName(name)
    view.setAccessibleName(name.replace("List", " list").replace("Results", " results"))
    view.setItemDelegate(RowDelegate(view))
    view.setMouseTracking(True)
    view.setFrameShape(QListView.Shape.NoFrame)
    view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    return view
