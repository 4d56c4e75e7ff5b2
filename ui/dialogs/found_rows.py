"""How the Find Models dialog shows what a scan found: one row per model with its name, the app
it was found in, its format, size, architecture and whether Branchwise can run it (or why not,
in one line); the full path and what adding it takes on the disk in the row's tooltip."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
)

from app.discovery.found import Format, FoundModel
from app.sizes import format_bytes
from ui.text.plain_text import literal

COLUMNS = ("Name", "Found in", "Format", "Size", "Architecture", "Can run")
_FORMATS = {Format.MLX: "MLX", Format.GGUF: "GGUF", Format.UNKNOWN: "—"}


def found_table() -> QTableWidget:
    table = QTableWidget(0, len(COLUMNS))
    table.setObjectName("FoundModelsTable")
    table.setAccessibleName("Models found on this computer")
    table.setHorizontalHeaderLabels(COLUMNS)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    rows = table.verticalHeader()
    rows.hide()
    # Why a model cannot run is the line a person reads most: it wraps onto more lines, whole,
    # rather than end in an ellipsis; the other columns keep to their contents.
    table.setWordWrap(True)
    rows.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header = table.horizontalHeader()
    for column in range(len(COLUMNS) - 1):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
    return table


def status(model: FoundModel) -> str:
    """The last column: in the library already, runnable (a base model says so), or why not."""
    if model.in_library:
        return "In the library"
    if not model.runnable:
        reason = model.reason or "unknown"
        return f"No: {reason[0].lower()}{reason[1:]}"
    if model.chat_template is False:
        return "Yes (base model: completions only)"
    return "Yes"


def row_cells(model: FoundModel) -> tuple[str, ...]:
    return (
        model.name,
        model.source.label,
        _FORMATS[model.format],
        format_bytes(model.bytes) if model.bytes else "—",
        model.architecture,
        status(model),
    )


def tooltip(model: FoundModel) -> str:
    lines = [model.name, model.path]
    if model.format == Format.MLX and model.runnable:
        lines.append("Used where it lies: nothing is copied.")
    elif model.format == Format.GGUF and model.runnable:
        lines.append(f"Importing it takes about {format_bytes(model.disk_needed)} on the disk.")
    if model.reason:
        lines.append(model.reason)
    if model.ollama is not None and model.ollama.system:
        lines.append("Keeps Ollama's system prompt and parameters as its defaults.")
    return "\n".join(lines)


def fill_table(table: QTableWidget, models: Sequence[FoundModel], muted: QBrush) -> None:
    """One row per model; what cannot be added is in `muted` text."""
    table.setRowCount(len(models))
    for row, model in enumerate(models):
        tip = literal(tooltip(model))
        addable = model.runnable and not model.in_library
        for column, text in enumerate(row_cells(model)):
            item = QTableWidgetItem(text)
            item.setToolTip(tip)
            if column == 3:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if not addable:
                item.setForeground(muted)
            table.setItem(row, column, item)


def dialog_button(text: str, tip: str) -> QPushButton:
    """A dialog's push button, named for screen readers by its text (without an ellipsis)."""
    button = QPushButton(text)
    button.setAccessibleName(text.rstrip("…"))
    button.setToolTip(tip)
    return button
