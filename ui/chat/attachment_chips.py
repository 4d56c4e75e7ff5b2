"""Files attached to a message, shown as chips: name, size and tokens. A click opens the text
the model reads from the file; in the composer a chip also has a button that removes it before
sending. The text shown is what was extracted when the file was attached (never the file on disk
now), as plain text."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.sizes import format_size
from ui.chat.chip import Chip
from ui.widgets.icons import themed_icon
from ui.widgets.theme import em, scale_font
from ui.widgets.view_models import AttachmentView

NOT_IN_EXPORT = "not in the export"


def chip_details(attachment: AttachmentView) -> str:
    if attachment.missing:
        return NOT_IN_EXPORT
    tokens = attachment.tokens
    return f"{format_size(attachment.size)} · {tokens:,} token{'s' if tokens != 1 else ''}"


class AttachmentPreview(QDialog):
    """The text extracted from one attached file, read-only."""

    def __init__(self, attachment: AttachmentView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("AttachmentPreview")
        self.setWindowTitle(attachment.name)
        self.setAccessibleName(f"Text of {attachment.name}")
        caption = QLabel(
            "Not in the export: only its name was imported"
            if attachment.missing
            else f"{chip_details(attachment)} · the text the model reads"
        )
        caption.setObjectName("EmptyHint")
        self.text = QPlainTextEdit(attachment.text)
        self.text.setReadOnly(True)
        self.text.setAccessibleName("Attached file text")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(caption)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        self.resize(em(self, 40), em(self, 28))


class AttachmentChip(Chip):
    def __init__(
        self, attachment: AttachmentView, removable: bool, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("AttachmentChip")
        self.attachment = attachment
        self.setAccessibleName(f"Attached file {attachment.name}")
        self.setToolTip(
            f"{attachment.name} was named in the imported chat, but its contents were not in the"
            " export"
            if attachment.missing
            else f"{attachment.name}: click to see the text the model reads"
        )
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        icon = QLabel()
        size = em(self, 1.1)
        icon.setPixmap(themed_icon("file-text").pixmap(QSize(size, size)))
        self.name_label = QLabel(attachment.name)
        self.name_label.setObjectName("AttachmentName")
        self.name_label.setTextFormat(Qt.TextFormat.PlainText)  # names come from files, exports
        scale_font(self.name_label, 0.9, bold=True)
        self.details_label = QLabel(chip_details(attachment))
        self.details_label.setObjectName("AttachmentDetails")
        scale_font(self.details_label, 0.85)
        row = QHBoxLayout(self)
        row.setContentsMargins(em(self, 0.5), em(self, 0.25), em(self, 0.4), em(self, 0.25))
        row.setSpacing(em(self, 0.35))
        row.addWidget(icon)
        row.addWidget(self.name_label)
        row.addWidget(self.details_label)
        self.remove_button: QToolButton | None = None
        if removable:
            self.remove_button = self._remove_button(attachment.name)
            row.addWidget(self.remove_button)


class AttachmentChips(QWidget):
    """A row of chips. `removeRequested(index)` asks for one to go (only if `removable`);
    `align_right` for a user's message, whose bubble sits on the right."""

    removeRequested = Signal(int)

    def __init__(
        self, removable: bool, align_right: bool = False, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("AttachmentChips")
        self._removable = removable
        self._first = 1 if align_right else 0  # chips go after the stretch that pushes them
        self.chips: list[AttachmentChip] = []
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(em(self, 0.4))
        self._row.addStretch(1)
        self.preview: AttachmentPreview | None = None
        self.hide()

    def set_attachments(self, attachments: Sequence[AttachmentView]) -> None:
        if [c.attachment for c in self.chips] == list(attachments):
            return
        for chip in self.chips:
            chip.hide()
            chip.setParent(None)
            chip.deleteLater()
        self.chips = []
        for index, attachment in enumerate(attachments):
            chip = AttachmentChip(attachment, self._removable, self)
            chip.openRequested.connect(lambda a=attachment: self.open_preview(a))
            chip.removeRequested.connect(lambda i=index: self.removeRequested.emit(i))
            self._row.insertWidget(self._first + index, chip)
            self.chips.append(chip)
        self.setVisible(bool(self.chips))

    def open_preview(self, attachment: AttachmentView) -> AttachmentPreview:
        self.preview = AttachmentPreview(attachment, self.window())
        self.preview.show()
        return self.preview
