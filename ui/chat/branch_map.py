"""The branch map: a side panel outlining the open conversation's branch points.

Not a mind map: an indented outline where each line is a straight run of messages (collapsed),
so even a conversation of hundreds of turns stays readable. Per line: the first words (a
compacted branch: what its summary stands for), which version it is of how many, the tokens on
its path, where that path is cached (in memory, on disk, not cached) and the estimated time to
the first token if the person continues there. The current path is bold and marked. Click or
Enter switches to that branch; arrows move; every line has an accessible name that says all of
this in words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QDockWidget, QHeaderView, QTreeWidget, QTreeWidgetItem, QWidget

from app.chat.branch_outline import OutlineNode
from ui.widgets.theme import em

if TYPE_CHECKING:
    from app.chat.branch_map_source import BranchState

TIER_TEXT = {"memory": "in memory", "disk": "on disk", "none": "not cached"}
_FIRST_ID = Qt.ItemDataRole.UserRole


def ttft_text(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


class BranchMapTree(QTreeWidget):
    switchRequested = Signal(int)  # the first message of the branch to show

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("BranchMap")
        self.setAccessibleName("Branch map")
        self.setHeaderLabels(["Branch", "Tokens", "Cache", "First token"])
        self.setUniformRowHeights(True)
        self.setAllColumnsShowFocus(True)
        self.setIndentation(em(self, 1))
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        # Fixed widths from the widest text each column can hold: sizing to contents would
        # measure every line on each update, too slow for a map of hundreds of branches.
        metrics = self.fontMetrics()
        for column, widest in ((1, "000,000"), (2, "not cached"), (3, "First token")):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)
            self.setColumnWidth(column, metrics.horizontalAdvance(widest) + em(self, 1))
        self.itemActivated.connect(self._activated)
        self.itemClicked.connect(self._activated)
        self._items: dict[int, QTreeWidgetItem] = {}  # by the run's last message id
        self._nodes: dict[int, OutlineNode] = {}
        self._states: Mapping[int, BranchState] = {}

    def set_outline(self, nodes: Sequence[OutlineNode]) -> None:
        """Show an outline (cache columns stay as they were for lines still there)."""
        self.setUpdatesEnabled(False)
        try:
            self.clear()
            self._items.clear()
            self._nodes.clear()
            current = None
            bold = QFont(self.font())
            bold.setBold(True)
            pending: list[tuple[QTreeWidgetItem | None, OutlineNode]] = [
                (None, n) for n in reversed(nodes)
            ]
            while pending:
                parent, node = pending.pop()
                item = QTreeWidgetItem([self._label(node), "", "", ""])
                item.setData(0, _FIRST_ID, node.first_id)
                if node.on_active_path:
                    item.setFont(0, bold)
                    current = item
                if parent is None:
                    self.addTopLevelItem(item)
                else:
                    parent.addChild(item)
                self._items[node.last_id] = item
                self._nodes[node.last_id] = node
                self._fill(item, node, self._states.get(node.last_id))
                pending.extend((item, child) for child in reversed(node.children))
            self.expandAll()
            if current is not None:
                self.setCurrentItem(current)
        finally:
            self.setUpdatesEnabled(True)

    def set_states(self, states: Mapping[int, BranchState]) -> None:
        self._states = states
        for last_id, item in self._items.items():
            self._fill(item, self._nodes[last_id], states.get(last_id))

    def _label(self, node: OutlineNode) -> str:
        mark = "● " if node.on_active_path else ""
        # The version first: a narrow panel cuts the end of the line, never which one it is.
        version = f"{node.version}/{node.versions} · " if node.versions > 1 else ""
        run = f" · {node.messages} messages" if node.messages > 1 else ""
        if node.summarises:  # a compacted branch: what it stands for before its own words
            return f"{mark}{version}Summary of {node.summarises}{run}"
        return f"{mark}{version}{node.label}{run}"

    def _fill(self, item: QTreeWidgetItem, node: OutlineNode, state: BranchState | None) -> None:
        tokens = cache = first = "–"
        if state is not None:
            tokens = f"{state.tokens:,}"
            cache = TIER_TEXT.get(state.tier, state.tier)
            first = ttft_text(state.ttft_s)
        item.setText(1, tokens)
        item.setText(2, cache)
        item.setText(3, first)
        where = "current branch, " if node.on_active_path else ""
        versions = f"version {node.version} of {node.versions}, " if node.versions > 1 else ""
        what = f"summary of {node.summarises}" if node.summarises else f"{node.role}: {node.label}"
        spoken = (
            f"{where}{what}; {versions}{node.messages} messages; "
            f"{tokens} tokens, {cache}, first token {first}"
        )
        item.setData(0, Qt.ItemDataRole.AccessibleTextRole, spoken)
        item.setToolTip(0, spoken)

    def _activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        self.switchRequested.emit(int(item.data(0, _FIRST_ID)))


class BranchMapDock(QDockWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Branch Map", parent)
        self.setObjectName("BranchMapDock")
        self.setAccessibleName("Branch map panel")
        self.tree = BranchMapTree(self)
        self.setWidget(self.tree)
        self.setMinimumWidth(em(self, 30))
