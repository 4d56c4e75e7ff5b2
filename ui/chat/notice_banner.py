"""A non-modal strip above the chat for things the person should see: a refusal, an error, or
"Conversation deleted" with an Undo button. It hides itself after a while; it never blocks."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QToolButton, QWidget

from ui.text.plain_text import literal, menu_text, plain_label
from ui.widgets.theme import em

NOTICE_MS = 8000
UNDO_MS = 12000


class NoticeBanner(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("NoticeBanner")
        self.setAccessibleName("Notice")
        self._action: Callable[[], None] | None = None
        self.label = plain_label()  # notices quote titles, file names and errors
        self.label.setObjectName("NoticeText")
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.action_button = QPushButton()
        self.action_button.setObjectName("NoticeAction")
        self.action_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.close_button = QToolButton()
        self.close_button.setObjectName("NoticeClose")
        self.close_button.setText("×")
        self.close_button.setAutoRaise(True)
        self.close_button.setAccessibleName("Dismiss notice")
        self.close_button.setToolTip("Dismiss")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(em(self, 0.8), em(self, 0.35), em(self, 0.4), em(self, 0.35))
        layout.setSpacing(em(self, 0.5))
        layout.addWidget(self.label, 1)
        layout.addWidget(self.action_button)
        layout.addWidget(self.close_button)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.dismiss)
        self.action_button.clicked.connect(self._run_action)
        self.close_button.clicked.connect(self.dismiss)
        self.hide()

    def show_notice(
        self,
        text: str,
        action_text: str | None = None,
        action: Callable[[], None] | None = None,
        kind: str = "info",
        sticky: bool = False,
    ) -> None:
        """Show `text`, with a button that runs `action` once when given one; a sticky notice
        stays until dismissed."""
        self._action = action
        self.label.setText(text)
        self.setAccessibleDescription(text)
        self.action_button.setVisible(action is not None)
        if action is not None:
            self.action_button.setText(menu_text(action_text or "OK"))
            self.action_button.setAccessibleName(action_text or "OK")
            self.action_button.setToolTip(literal(f"{action_text} ({text})"))
        self.setProperty("kind", kind)
        self.style().unpolish(self)
        self.style().polish(self)
        self.show()
        if sticky:
            self._timer.stop()
        else:
            self._timer.start(UNDO_MS if action is not None else NOTICE_MS)

    @property
    def text(self) -> str:
        return "" if self.isHidden() else self.label.text()

    @Slot()
    def dismiss(self) -> None:
        self._timer.stop()
        self._action = None
        self.hide()

    @Slot()
    def _run_action(self) -> None:
        action = self._action
        self.dismiss()
        if action is not None:
            action()
