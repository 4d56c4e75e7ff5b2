"""The editor that takes a user message's place while the person edits it: Enter saves and sends,
Shift+Enter adds a line, Esc cancels, as in the composer."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from ui.chat.composer import ComposerEdit
from ui.widgets.auto_height import fit_to_text
from ui.widgets.theme import em

# The editor grows with the text between these many lines, then scrolls.
_EDITOR_LINES = (2, 14)


class InlineEditor(QFrame):
    """Emits `saved` with the new text (never empty, never the unchanged original) or
    `cancelled`; what an edit means is for the window to decide."""

    saved = Signal(str)
    cancelled = Signal()

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("InlineEditor")
        self._original = text
        self.edit = ComposerEdit()
        self.edit.setPlainText(text)
        self.edit.setObjectName("InlineEditorText")
        self.edit.setAccessibleName("Edit message")
        self.edit.setToolTip(
            "Edit the message; saving keeps the old version as a sibling. "
            "Enter saves and sends · Shift+Enter adds a line · Esc cancels"
        )
        self.save_button = QPushButton("Save && send")
        self.save_button.setObjectName("PrimaryButton")
        self.save_button.setAccessibleName("Save edit and send")
        self.save_button.setToolTip("Save as a new version and generate a reply (Enter)")
        cancel = QPushButton("Cancel")
        cancel.setAccessibleName("Cancel editing")
        cancel.setToolTip("Discard the changes (Esc)")
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(cancel)
        buttons.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(em(self, 0.6), em(self, 0.6), em(self, 0.6), em(self, 0.6))
        layout.addWidget(self.edit)
        layout.addLayout(buttons)
        self.save_button.clicked.connect(self._save)
        cancel.clicked.connect(self.cancelled)
        self.edit.submitted.connect(self._save)
        self.edit.escapePressed.connect(self.cancelled)
        self.edit.textChanged.connect(self._update_save_button)
        self.edit.textChanged.connect(self._fit_height)
        # Esc from the buttons too, not only from the text.
        QShortcut(
            QKeySequence("Escape"), self, self.cancelled.emit,
            Qt.ShortcutContext.WidgetWithChildrenShortcut,
        )
        self._update_save_button()

    def _text(self) -> str:
        return self.edit.toPlainText().strip()

    @Slot()
    def _fit_height(self) -> None:
        fit_to_text(self.edit, _EDITOR_LINES[0], _EDITOR_LINES[1])

    def resizeEvent(self, event: QResizeEvent) -> None:
        # The text wraps differently at a new width.
        super().resizeEvent(event)
        self._fit_height()

    @Slot()
    def _update_save_button(self) -> None:
        text = self._text()
        self.save_button.setEnabled(bool(text) and text != self._original.strip())

    @Slot()
    def _save(self) -> None:
        if self.save_button.isEnabled():
            self.saved.emit(self._text())
