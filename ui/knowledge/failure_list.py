"""The files of a knowledge folder that are not indexed, each with its reason (an encrypted PDF,
a zip bomb, not text, unreadable, no text in it…), and what the last run passed over (links
not followed): paths relative to the folder, the full path in the tooltip.

Everything in it can be copied, for a bug report or to fix the files: the selected rows with
Ctrl+C or the context menu, all of them with *Copy List*, one "path<TAB>reason" line each
with the full path. A path and a reason come from the person's files: shown as plain text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QMenu,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ui.text.plain_text import literal, plain_label
from ui.widgets.file_places import reveal_file

# Rows shown at most: a folder of 100,000 broken files stays quick to show; Copy List has all.
MAX_SHOWN = 2000
_PATH_ROLE = Qt.ItemDataRole.UserRole


@dataclass(frozen=True, slots=True)
class NotIndexed:
    path: str  # absolute
    reason: str
    passed_over: bool = False  # by the last run (a link not followed), rather than failed


def as_lines(rows: Sequence[NotIndexed]) -> str:
    return "".join(f"{row.path}\t{row.reason}\n" for row in rows)


def shown_path(path: str, root: str) -> str:
    try:
        return str(Path(path).relative_to(root)) or Path(path).name
    except ValueError:  # the folder is one file, or a path outside it
        return path


class FailureList(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[NotIndexed] = []
        self.heading = plain_label("")
        self.heading.setObjectName("KnowledgeSection")
        self.copy_button = QPushButton("Copy List")
        self.copy_button.setAccessibleName("Copy the list of files not indexed")
        self.copy_button.setToolTip("Copy every file and its reason, one per line")
        self.copy_button.clicked.connect(self.copy_all)
        self.tree = QTreeWidget()
        self.tree.setObjectName("KnowledgeFailures")
        self.tree.setAccessibleName("Files not indexed")
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["File", "Reason"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._menu)
        # The view's own Copy takes only the current cell: rows are copied whole, with reasons.
        copy = QAction("Copy", self.tree)
        copy.setShortcut(QKeySequence.StandardKey.Copy)
        copy.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        copy.triggered.connect(self.copy_selected)
        self.tree.addAction(copy)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self.more = plain_label("")
        self.more.setObjectName("FieldHint")
        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        top.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.more)

    @property
    def rows(self) -> list[NotIndexed]:
        return list(self._rows)

    def set_rows(self, rows: Sequence[NotIndexed], root: str) -> None:
        if list(rows) == self._rows:
            return  # a refresh with nothing new keeps the person's selection and scroll
        self._rows = list(rows)
        failed = sum(1 for row in rows if not row.passed_over)
        passed = len(rows) - failed
        heading = f"Files not indexed ({failed:,})"
        if passed:
            heading += f" · passed over ({passed:,})"
        self.heading.setText(heading)
        self.tree.clear()
        items = []
        for row in rows[:MAX_SHOWN]:
            item = QTreeWidgetItem([shown_path(row.path, root), row.reason])
            item.setData(0, _PATH_ROLE, row.path)
            item.setToolTip(0, literal(row.path))
            item.setToolTip(1, literal(row.reason))
            items.append(item)
        self.tree.addTopLevelItems(items)
        if items:
            self.tree.resizeColumnToContents(0)
            self.tree.setColumnWidth(0, min(self.tree.columnWidth(0), self.width() // 2 or 240))
        hidden = len(rows) - len(items)
        self.more.setText(f"…and {hidden:,} more (Copy List copies them all)" if hidden else "")
        self.more.setVisible(bool(hidden))
        self.copy_button.setEnabled(bool(rows))
        self.tree.setVisible(bool(rows))

    def selected_rows(self) -> list[NotIndexed]:
        by_path = {row.path: row for row in self._rows}
        chosen = [str(item.data(0, _PATH_ROLE)) for item in self.tree.selectedItems()]
        return [by_path[path] for path in chosen if path in by_path]

    def copy_all(self) -> None:
        QGuiApplication.clipboard().setText(as_lines(self._rows))

    def copy_selected(self) -> None:
        QGuiApplication.clipboard().setText(as_lines(self.selected_rows()))

    def _menu(self, at: QPoint) -> None:
        chosen = self.selected_rows()
        if not chosen:
            return
        menu = QMenu(self)
        menu.addAction("Copy", self.copy_selected)
        if len(chosen) == 1:
            menu.addAction("Reveal in File Manager", lambda: reveal_file(chosen[0].path))
        menu.exec(self.tree.viewport().mapToGlobal(at))
