"""A layout that puts its widgets in rows, wrapping to a new row when the width runs out (Qt's
own Flow Layout example, with rows that may sit on the right).

Chips of attached images use it: a draft with eight screenshots wraps onto a second row rather
than widening the composer, and so the window, past the screen.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QWidget


class FlowLayout(QLayout):
    def __init__(
        self, parent: QWidget | None = None, spacing: int = 6, align_right: bool = False
    ) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self._align_right = align_right
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def sizeHint(self) -> QSize:
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        # As narrow as the widest item: the rest wraps.
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        margins = self.contentsMargins()
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    def _arrange(self, rect: QRect, move: bool) -> int:
        """Lay the items out in rows within `rect` (only measuring unless `move`); returns the
        height they take."""
        margins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        rows: list[list[QLayoutItem]] = [[]]
        used = 0
        for item in self._items:
            width = item.sizeHint().width()
            if rows[-1] and used + self._spacing + width > area.width():
                rows.append([])
                used = 0
            used += width + (self._spacing if len(rows[-1]) else 0)
            rows[-1].append(item)
        y = bottom = area.y()
        for row in filter(None, rows):
            widths = [item.sizeHint().width() for item in row]
            span = sum(widths) + self._spacing * (len(row) - 1)
            x = area.x() + (max(0, area.width() - span) if self._align_right else 0)
            height = max(item.sizeHint().height() for item in row)
            for item, width in zip(row, widths, strict=True):
                if move:
                    item.setGeometry(QRect(QPoint(x, y), QSize(width, height)))
                x += width + self._spacing
            bottom = y + height
            y = bottom + self._spacing
        return bottom - rect.y() + margins.bottom()
