"""The Knowledge page's list of folders, painted as the sidebar paints conversations: each
folder's name and, under it, its state in a few words (a run's percentage, "Offline",
"Cancelled"), in the theme's warning colour where it needs the person's eye. The selection stays
on the same folder through every refresh."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QListWidget, QListWidgetItem

from ui.knowledge.folder_state import SHORT, WARNINGS, ShownState
from ui.sidebar.list_models import SecondLineRole, WarningRole
from ui.sidebar.row_delegate import list_view
from ui.text.plain_text import literal

_NAME_ROLE = Qt.ItemDataRole.UserRole


@dataclass(frozen=True, slots=True)
class FolderRow:
    """What one line of the list shows."""

    name: str
    root: str
    state: ShownState
    percent: int | None  # of a run under way, when it can tell

    def second_line(self) -> str:
        short = SHORT[self.state]
        return f"{short} · {self.percent}%" if self.percent is not None else short


class FolderList(QListWidget):
    selectedName = Signal(str)  # "" when none is selected

    def __init__(self) -> None:
        super().__init__()
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.itemSelectionChanged.connect(lambda: self.selectedName.emit(self.selected()))

    def selected(self) -> str:
        items = self.selectedItems()
        return str(items[0].data(_NAME_ROLE)) if items else ""

    def names(self) -> list[str]:
        return [str(self.item(row).data(_NAME_ROLE)) for row in range(self.count())]

    def select(self, name: str) -> None:
        for row in range(self.count()):
            if self.item(row).data(_NAME_ROLE) == name:
                self.setCurrentRow(row)
                return

    def set_rows(self, rows: Sequence[FolderRow]) -> None:
        """Show `rows`; the selected folder stays selected (else the first is)."""
        keep = self.selected()
        self.blockSignals(True)
        if self.names() != [row.name for row in rows]:
            self.clear()
            for row in rows:
                item = QListWidgetItem(row.name)
                item.setData(_NAME_ROLE, row.name)
                self.addItem(item)
        for index, row in enumerate(rows):
            item = self.item(index)
            item.setData(SecondLineRole, row.second_line())
            item.setData(WarningRole, row.state in WARNINGS)
            item.setToolTip(literal(f"{row.name}\n{row.root}"))
            item.setData(Qt.ItemDataRole.AccessibleTextRole, f"{row.name}, {row.second_line()}")
        self.blockSignals(False)
        names = [row.name for row in rows]
        self.select(keep if keep in names else (names[0] if names else ""))
        if self.selected() != keep:
            self.selectedName.emit(self.selected())


def folder_list() -> FolderList:
    view = list_view("KnowledgeList", FolderList)
    view.setAccessibleName("Knowledge folders")
    return view
