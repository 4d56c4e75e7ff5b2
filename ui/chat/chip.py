"""A chip the person opens with a click or the keyboard: the base of the attached-file chips and
the image chips, which share how they are opened and asked to go."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QFrame, QToolButton

from ui.widgets.icons import themed_icon


class Chip(QFrame):
    """`openRequested` on a left click, Return, Enter or Space; `removeRequested` from its
    remove button, where the subclass has one."""

    openRequested = Signal()
    removeRequested = Signal()

    def _remove_button(self, name: str) -> QToolButton:
        """The small × that asks for the chip named `name` to go."""
        button = QToolButton()
        button.setObjectName("AttachmentRemove")
        button.setIcon(themed_icon("x"))
        button.setAutoRaise(True)
        button.setAccessibleName(f"Remove {name}")
        button.setToolTip(f"Remove {name}")
        button.clicked.connect(self.removeRequested)
        return button

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.openRequested.emit()
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.openRequested.emit()
            return
        super().keyPressEvent(event)
