"""The editor that takes a user message's place while the person edits it: Enter saves and sends,
Shift+Enter adds a line, Esc cancels, as in the composer.

The message's images come along as removable chips; more are added with the image button, or
pasted or dropped onto the text, and kept by the window as the composer's are
(`imagesRequested`, `imagePasted`, then `add_image`).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import QFileDialog, QFrame, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from app.chat.image_attach import is_image_path
from ui.chat.composer import IMAGE_FILES, ComposerEdit
from ui.chat.draft_attachments import DraftAttachments
from ui.widgets.auto_height import fit_to_text
from ui.widgets.icon_button import icon_button
from ui.widgets.theme import em
from ui.widgets.view_models import ImageView

# The editor grows with the text between these many lines, then scrolls.
_EDITOR_LINES = (2, 14)


class InlineEditor(QFrame):
    """Emits `saved` with the new text (never empty) and the images the new version has
    (ImageViews), unless neither changed, or `cancelled`; what an edit means is for the window
    to decide."""

    saved = Signal(str, list)
    cancelled = Signal()
    imagesRequested = Signal(list)  # image file paths to keep and add
    imagePasted = Signal(bytes)  # a pasted picture's PNG bytes

    def __init__(
        self,
        text: str,
        images: Sequence[ImageView] = (),
        draft: str | None = None,
        sight: tuple[str, str] = ("", ""),
        parent: QWidget | None = None,
    ) -> None:
        """`draft` is the text to start from when it is not `text` (an edit the window could
        not save); `sight` is (blind, refusal) as `DraftAttachments.set_model_sight` takes."""
        super().__init__(parent)
        self.setObjectName("InlineEditor")
        self._original = text
        self._original_images = tuple(images)
        self.attached = DraftAttachments()
        self.attached.set_model_sight(*sight)
        for image in images:
            self.attached.add_image(image)
        self.image_button = icon_button(
            "image", "Add images", "Add images to this version of the message", "AttachButton"
        )
        self.edit = ComposerEdit()
        self.edit.setPlainText(text if draft is None else draft)
        self.edit.setObjectName("InlineEditorText")
        self.edit.setAccessibleName("Edit message")
        self.edit.setToolTip(
            "Edit the message; saving keeps the old version as a sibling. "
            "Enter saves and sends · Shift+Enter adds a line · Esc cancels"
        )
        self.save_button = QPushButton("Save && send")
        self.save_button.setObjectName("PrimaryButton")
        self.save_button.setAccessibleName("Save edit and send")
        cancel = QPushButton("Cancel")
        cancel.setAccessibleName("Cancel editing")
        cancel.setToolTip("Discard the changes (Esc)")
        buttons = QHBoxLayout()
        buttons.addWidget(self.image_button)
        buttons.addStretch(1)
        buttons.addWidget(cancel)
        buttons.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(em(self, 0.6), em(self, 0.6), em(self, 0.6), em(self, 0.6))
        layout.addWidget(self.attached)
        layout.addWidget(self.edit)
        layout.addLayout(buttons)
        self.image_button.clicked.connect(self.choose_images)
        self.edit.filesPasted.connect(self._on_files)
        self.edit.imagePasted.connect(self.imagePasted)
        self.attached.changed.connect(self._update_save_button)
        self.save_button.clicked.connect(self._save)
        cancel.clicked.connect(self.cancelled)
        self.edit.submitted.connect(self._save)
        self.edit.escapePressed.connect(self.cancelled)
        self.edit.textChanged.connect(self._update_save_button)
        self.edit.textChanged.connect(self._fit_height)
        # Esc from the buttons too, not only from the text.
        QShortcut(
            QKeySequence("Escape"),
            self,
            self.cancelled.emit,
            Qt.ShortcutContext.WidgetWithChildrenShortcut,
        )
        self._update_save_button()

    def add_image(self, image: ImageView) -> None:
        self.attached.add_image(image)

    def set_model_sight(self, blind: str, refusal: str) -> None:
        self.attached.set_model_sight(blind, refusal)

    @Slot()
    def choose_images(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Add images", "", IMAGE_FILES)
        self._on_files(paths)

    @Slot(list)
    def _on_files(self, paths: list[str]) -> None:
        # Only images change while editing: a message's files stay as they were.
        images = [path for path in paths if is_image_path(path)]
        if images:
            self.imagesRequested.emit(images)

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
        changed = (
            text != self._original.strip() or self.attached.image_views() != self._original_images
        )
        refusal = self.attached.refusal
        content = bool(text) or bool(self.attached.image_views())
        self.save_button.setEnabled(content and changed and not refusal)
        self.save_button.setToolTip(refusal or "Save as a new version and generate a reply (Enter)")

    @Slot()
    def _save(self) -> None:
        if self.save_button.isEnabled():
            self.saved.emit(self._text(), list(self.attached.image_views()))
