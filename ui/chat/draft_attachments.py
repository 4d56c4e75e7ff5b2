"""What a message being written carries besides its text: attached files and images, as chips
that can be removed, in the order they were attached. The composer holds one for the draft and
the inline editor one for the message it edits.

It keeps each file's record as the store will keep it (the controller made it) and each image's
view, which holds all its record says. When the loaded model cannot see images, every image chip
says so and `refusal` says why the message cannot go as it is.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.images.store import StoredImage
from ui.chat.attachment_chips import AttachmentChips
from ui.chat.image_chips import ImageChips
from ui.widgets.theme import em
from ui.widgets.view_models import AttachmentView, ImageView


class DraftAttachments(QWidget):
    """`changed` fires whenever one is added or removed (the token count includes them)."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.files = AttachmentChips(removable=True)
        self.images = ImageChips(removable=True)
        self._files: list[dict[str, Any]] = []
        self._images: list[ImageView] = []
        self._blind = ""
        self._refusal = ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(em(self, 0.3))
        layout.addWidget(self.images)
        layout.addWidget(self.files)
        self.files.removeRequested.connect(self.remove_file)
        self.images.removeRequested.connect(self.remove_image)

    def records(self) -> list[dict[str, Any]]:
        """Every attachment as the store keeps it: the images, then the files."""
        return [image_record(view) for view in self._images] + list(self._files)

    def image_views(self) -> tuple[ImageView, ...]:
        return tuple(self._images)

    @property
    def has_images(self) -> bool:
        return bool(self._images)

    @property
    def refusal(self) -> str:
        """Why the message cannot be sent with its images ("" when it can)."""
        return self._refusal if self._images else ""

    def set_model_sight(self, blind: str, refusal: str) -> None:
        """`blind` is what an image chip says when the loaded model cannot see images (e.g.
        "SmolLM2 can't see images"), `refusal` the notice a send gets then; both "" when it
        can see them."""
        self._blind, self._refusal = blind, refusal
        self._show()

    def add_file(self, record: dict[str, Any]) -> None:
        self._files.append(record)
        self._show()

    def add_image(self, view: ImageView) -> None:
        """An image already attached (the same picture again, or counted again for another
        model) takes its own place rather than showing twice."""
        digests = [image.sha256 for image in self._images]
        if view.sha256 in digests:
            self._images[digests.index(view.sha256)] = view
        else:
            self._images.append(view)
        self._show()

    @Slot(int)
    def remove_file(self, index: int) -> None:
        del self._files[index]
        self._show()

    @Slot(int)
    def remove_image(self, index: int) -> None:
        del self._images[index]
        self._show()

    def clear(self) -> None:
        self._files.clear()
        self._images.clear()
        self._show()

    def _show(self) -> None:
        self.files.set_attachments([AttachmentView.from_record(item) for item in self._files])
        self.images.set_images(self._images, self._blind)
        self.setVisible(bool(self._files or self._images))
        self.changed.emit()


def stored_image(view: ImageView) -> StoredImage:
    """The kept image a chip shows."""
    return StoredImage(view.sha256, view.name, view.size, view.width, view.height, view.format)


def image_record(view: ImageView) -> dict[str, Any]:
    """The record a message keeps for the image a chip shows."""
    return stored_image(view).as_record(view.tokens)
