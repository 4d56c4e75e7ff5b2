"""How the model library shows its models: the table, and in each row the facts in its cells,
and marks for the model loaded now (a check and bold type) and the default for new chats (a
"Default" badge after the name). Both marks are also said in the row's tooltip, which starts with
the full name, since a long one is elided in its cell."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QBrush, QIcon, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
)

from app.library.entries import ModelInfo, ModelKind
from app.sizes import format_bytes
from ui.text.plain_text import literal
from ui.widgets.icons import themed_icon

COLUMNS = ("Name", "Architecture", "Parameters", "Quantization", "Size", "Context")
DEFAULT_ROLE = Qt.ItemDataRole.UserRole + 1  # True on the default model's name cell
BADGE = "Default"
Index = QModelIndex | QPersistentModelIndex


def model_table() -> QTableWidget:
    """The library's table: one model a row, one selected at a time, the name editable."""
    table = QTableWidget(0, len(COLUMNS))
    table.setObjectName("ModelTable")
    table.setAccessibleName("Models")
    table.setHorizontalHeaderLabels(COLUMNS)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(
        QAbstractItemView.EditTrigger.EditKeyPressed | QAbstractItemView.EditTrigger.DoubleClicked
    )
    table.verticalHeader().hide()
    table.setWordWrap(False)  # a long name is elided; the tooltip has all of it
    table.setItemDelegateForColumn(0, DefaultBadgeDelegate(table))
    header = table.horizontalHeader()
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for column in range(1, len(COLUMNS)):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
    table.setToolTip("Double-click a name (or press F2) to rename it")
    return table


def fill_table(
    table: QTableWidget,
    models: Sequence[ModelInfo],
    marks: tuple[str | None, str | None],
    muted: QBrush,
    select_folder: Path | None,
) -> None:
    """One row per model, marking the loaded and the default model (`marks`: their ids), in
    `muted` text where a model cannot be used; the row of `select_folder` is selected. The
    table's signals stay blocked meanwhile: nothing was renamed or chosen."""
    loaded_id, default_id = marks
    table.blockSignals(True)
    table.setRowCount(len(models))
    for row, info in enumerate(models):
        loaded, default = info.id == loaded_id, info.id == default_id
        tip = literal(row_tooltip(info, loaded, default))
        for column, text in enumerate(row_cells(info)):
            item = QTableWidgetItem(text)
            item.setToolTip(tip)
            if column == 0:
                mark_name(item, loaded, default)
            else:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
            if info.problem:
                item.setForeground(muted)
            table.setItem(row, column, item)
        if select_folder is not None and info.folder == select_folder:
            table.selectRow(row)
    table.blockSignals(False)


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
    if info.missing:
        return (info.name, "missing", "—", "—", "—", "—")
    marks = [
        # A vision model that reads images here says so beside its architecture, and a speech
        # or embedding model (which no chat loads) what it is for.
        *(["images"] if info.sight == "Reads images" else []),
        *(["speech to text"] if info.kind == ModelKind.SPEECH else []),
        *(["embedding"] if info.kind == ModelKind.EMBEDDING else []),
        # A base model has no chat template: it serves plain completions.
        *(["base model"] if info.chat_template is False else []),
    ]
    return (
        info.name,
        " · ".join([info.architecture, *marks]),
        format_parameters(info.parameters),
        info.quantization,
        format_bytes(info.size_bytes),
        "—"
        if info.kind == ModelKind.SPEECH
        else f"{info.context_length:,}"
        if info.context_length
        else "unknown",
    )


def row_tooltip(info: ModelInfo, loaded: bool, default: bool) -> str:
    marks = [*(["Loaded now"] if loaded else []), *(["Default for new chats"] if default else [])]
    sight = [info.sight] if info.sight else []
    base = (
        ["No chat template: a base model for plain completions (/v1/completions)"]
        if info.chat_template is False
        else []
    )
    defaults = (
        ["Keeps its source app's system prompt and parameters"]
        if info.defaults.params or info.defaults.system_prompt
        else []
    )
    where = info.problem or f"{info.source}\n{info.path}"
    return "\n".join([info.name, *marks, *sight, *base, *defaults, where])


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
