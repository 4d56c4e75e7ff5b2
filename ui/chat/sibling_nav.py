"""`‹ 2/3 ›`: the control under a message that moves between its versions."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from ui.widgets.icon_button import message_action
from ui.widgets.theme import scale_font


class SiblingNav(QWidget):
    """`‹ 2/3 ›`: moves between the versions of a message. Hidden when there is only one."""

    stepRequested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._index = 1
        self._count = 1
        self._previous = message_action("chevron-left", "Previous version", "Alt+Left")
        self._next = message_action("chevron-right", "Next version", "Alt+Right")
        self._label = QLabel()
        self._label.setObjectName("SiblingLabel")
        self._label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        scale_font(self._label, 0.9)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        for widget in (self._previous, self._label, self._next):
            layout.addWidget(widget)
        self._previous.clicked.connect(lambda: self.step(-1))
        self._next.clicked.connect(lambda: self.step(+1))

    @property
    def previous_button(self) -> QToolButton:
        return self._previous

    @property
    def next_button(self) -> QToolButton:
        return self._next

    @property
    def position_text(self) -> str:
        """What the control shows, e.g. "2/3"."""
        return self._label.text()

    def set_position(self, index: int, count: int) -> None:
        self._index, self._count = index, count
        self._label.setText(f"{index}/{count}")
        description = f"Version {index} of {count}" + (" (newest)" if index == count else "")
        self._label.setAccessibleName(description)
        self._label.setToolTip(description)
        self._previous.setEnabled(index > 1)
        self._next.setEnabled(index < count)
        self.setVisible(count > 1)

    def step(self, delta: int) -> None:
        if 1 <= self._index + delta <= self._count:
            self.stepRequested.emit(delta)
