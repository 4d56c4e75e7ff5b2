"""How the model library shows each model in its row: the facts in its cells, and marks for the
model loaded now (a check and bold type) and the default for new chats (a "Default" badge after
the name). Both marks are also said in the row's tooltip, which starts with the full name, since
a long one is elided in its cell."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QIcon, QPainter, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidgetItem,
)

from app.library.entries import ModelInfo
from app.sizes import format_bytes
from ui.widgets.icons import themed_icon

COLUMNS = ("Name", "Architecture", "Parameters", "Quantization", "Size", "Context")
DEFAULT_ROLE = Qt.ItemDataRole.UserRole + 1  # True on the default model's name cell
BADGE = "Default"
Index = QModelIndex | QPersistentModelIndex


def format_parameters(count: int | None) -> str:
    if not count:
        return "unknown"
    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if count >= size:
            value = count / size
            return f"{value:.{0 if value >= 100 else 1}f}{suffix}"
    return str(count)


def row_cells(info: ModelInfo) -> tuple[str, ...]:
    """The text of each of COLUMNS for `info`."""
    return (
        info.name,
        info.architecture,
        format_parameters(info.parameters),
        info.quantization,
        format_bytes(info.size_bytes),
        f"{info.context_length:,}" if info.context_length else "unknown",
    )


def row_tooltip(info: ModelInfo, loaded: bool, default: bool) -> str:
    marks = [*(["Loaded now"] if loaded else []), *(["Default for new chats"] if default else [])]
    return "\n".join([info.name, *marks, info.problem or f"{info.source}\n{info.path}"])


def mark_name(item: QTableWidgetItem, loaded: bool, default: bool) -> None:
    """Mark the name cell of the loaded model and of the default one."""
    if loaded:
        item.setIcon(themed_icon("check"))
        font = item.font()
        font.setBold(True)
        item.setFont(font)
    item.setData(DEFAULT_ROLE, default)


class DefaultBadgeDelegate(QStyledItemDelegate):
    """Paints the name cell with a "Default" badge at its right end when DEFAULT_ROLE is set;
    the name is elided before the badge, never under it."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        if not index.data(DEFAULT_ROLE):
            super().paint(painter, option, index)
            return
        metrics = option.fontMetrics
        pad = max(3, metrics.height() // 3)
        width = metrics.horizontalAdvance(BADGE) + 2 * pad
        # The cell's background (hover, selection) spans the badge too.
        background = QStyleOptionViewItem(option)
        self.initStyleOption(background, index)
        background.text, background.icon = "", QIcon()
        style = option.widget.style() if option.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, background, painter, option.widget)
        name = QStyleOptionViewItem(option)
        name.rect = option.rect.adjusted(0, 0, -(width + 2 * pad), 0)
        super().paint(painter, name, index)

        height = metrics.height() + 2
        badge = QRect(name.rect.right() + pad, 0, width, height)
        badge.moveTop(option.rect.top() + (option.rect.height() - height) // 2)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Link
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(option.palette.color(role))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(badge.adjusted(0, 0, -1, -1), height / 3, height / 3)
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, BADGE)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        size = super().sizeHint(option, index)
        if index.data(DEFAULT_ROLE):
            metrics = option.fontMetrics
            pad = max(3, metrics.height() // 3)
            size.setWidth(size.width() + metrics.horizontalAdvance(BADGE) + 4 * pad)
        return size
