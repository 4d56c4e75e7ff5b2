"""Projects in the sidebar: the order of its rows (each project's heading, its chats unless it
is folded, then the loose chats), what a heading row says, and the item data roles that tell a
heading from a chat.

A heading carries no `IdRole` (that is a conversation's id): its own `ProjectIdRole`, whether it
is folded, how many chats it holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import QStyleOptionViewItem

from ui.text.plain_text import literal
from ui.widgets.icons import themed_icon
from ui.widgets.theme import ThemeColors
from ui.widgets.view_models import ConversationRow, ProjectRow

ProjectIdRole = Qt.ItemDataRole.UserRole + 8  # a project heading's project id
CollapsedRole = Qt.ItemDataRole.UserRole + 9  # a heading whose group is folded
CountRole = Qt.ItemDataRole.UserRole + 10  # how many chats a heading's project holds
InProjectRole = Qt.ItemDataRole.UserRole + 11  # a chat shown inside its project's group
# Chats dragged in the sidebar: their ids, one a line.
CHATS_MIME = "application/x-branchwise-chats"

Entry = ProjectRow | ConversationRow


def _recency(row: ConversationRow) -> tuple[bool, float]:
    return (not row.pinned, -row.updated_at.timestamp())


def sidebar_entries(
    projects: Sequence[ProjectRow], chats: Sequence[ConversationRow]
) -> list[Entry]:
    """The rows in order: each project's heading and (unfolded) its chats, then the loose
    chats; chats pinned first, then the most recently active. A chat naming a project not
    listed (deleted meanwhile) shows among the loose ones."""
    known = {p.id for p in projects}
    ordered = sorted(chats, key=_recency)
    rows: list[Entry] = []
    for project in projects:
        rows.append(project)
        if not project.collapsed:
            rows += [c for c in ordered if c.project_id == project.id]
    return rows + [c for c in ordered if c.project_id not in known]


def project_data(row: ProjectRow, role: int) -> Any:
    """What a project's heading shows for `role`."""
    chats = f"{row.chats} chat{'' if row.chats == 1 else 's'}"
    if role == Qt.ItemDataRole.DisplayRole:
        return row.name
    if role == Qt.ItemDataRole.ToolTipRole:
        state = "click to show its chats" if row.collapsed else "click to fold it"
        return literal(f"Project “{row.name}”: {chats}; {state}. Drop a chat here to move it in.")
    if role == Qt.ItemDataRole.AccessibleTextRole:
        return f"Project {row.name}, {chats}, {'collapsed' if row.collapsed else 'expanded'}"
    if role == ProjectIdRole:
        return row.id
    if role == CollapsedRole:
        return row.collapsed
    if role == CountRole:
        return row.chats
    return None


def paint_heading(
    painter: QPainter,
    option: QStyleOptionViewItem,
    index: QModelIndex | QPersistentModelIndex,
    inner: QRect,
    colors: ThemeColors,
) -> None:
    """A project's heading in `inner` (the row's content area): a chevron that says whether
    its group is folded, a folder, its name, and how many chats it holds (muted, right)."""
    metrics = option.fontMetrics
    side = metrics.height()
    pad = metrics.averageCharWidth()
    top = inner.top() + (metrics.lineSpacing() - side) // 2
    chevron = "chevron-right" if index.data(CollapsedRole) else "chevron-down"
    themed_icon(chevron).paint(painter, QRect(inner.left(), top, side, side))
    themed_icon("folder").paint(painter, QRect(inner.left() + side + pad // 2, top, side, side))
    text = QRect(inner.left() + 2 * side + pad * 3 // 2, inner.top(), 0, metrics.lineSpacing())
    text.setRight(inner.right())
    count = str(index.data(CountRole) or 0)
    painter.setFont(option.font)
    painter.setPen(QColor(colors.muted))
    right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
    painter.drawText(text, right, count)
    text.setRight(text.right() - metrics.horizontalAdvance(count) - pad)
    bold = QFont(option.font)
    bold.setWeight(QFont.Weight.DemiBold)
    painter.setFont(bold)
    painter.setPen(QColor(colors.text))
    name = QFontMetrics(bold).elidedText(
        str(index.data()), Qt.TextElideMode.ElideRight, text.width()
    )
    painter.drawText(text, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, name)
