"""Images attached to a message or a draft, shown as chips: a thumbnail, the name, the size in
pixels and bytes, and what the model makes of it ("≈ 1,234 tokens", or that the loaded model
cannot see images). A click opens the picture full size; in the composer and the editor a chip
also has a button that removes it. A file gone from the data folder, or one Qt cannot read,
shows as a chip saying so, never as an error.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.sizes import format_size
from ui.chat.chip import Chip
from ui.chat.image_files import THUMBNAILS, ReadImage
from ui.chat.image_viewer import ImageViewer
from ui.widgets.flow_layout import FlowLayout
from ui.widgets.icons import themed_icon
from ui.widgets.theme import em, scale_font
from ui.widgets.view_models import ImageView

MISSING = "image missing"
# The thumbnail's side, in em: two lines of the chip's text and a little more.
_THUMB_EM = 3.2
_NAME_EM = 11


def image_note(image: ImageView, blind: str, error: str) -> tuple[str, str]:
    """(kind, text) for the chip's last line: kind is "", "warning" or "danger"."""
    if image.path is None:
        return "danger", MISSING
    if error:
        return "danger", "cannot be read"
    if blind:
        return "warning", blind
    if image.tokens:
        return "", f"≈ {image.tokens:,} token{'s' if image.tokens != 1 else ''}"
    return "", ""


class ImageChip(Chip):
    def __init__(
        self, image: ImageView, removable: bool, blind: str, parent: QWidget | None = None
    ) -> None:
        """`blind` says the loaded model cannot see images ("" when it can)."""
        super().__init__(parent)
        self.setObjectName("ImageChip")
        self.image = image
        self.setAccessibleName(f"Attached image {image.name}")
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.thumbnail = QLabel()
        self.thumbnail.setObjectName("ImageThumbnail")
        side = em(self, _THUMB_EM)
        self.thumbnail.setFixedSize(side, side)
        self.thumbnail.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._blind = blind
        # Qt's error for a file it could not read ("" otherwise, and until the thumbnail is in).
        self.error = ""
        if image.path is not None:
            self.setCursor(Qt.CursorShape.PointingHandCursor)

        name = QLabel(
            self.fontMetrics().elidedText(
                image.name, Qt.TextElideMode.ElideMiddle, em(self, _NAME_EM)
            )
        )
        name.setObjectName("AttachmentName")
        name.setTextFormat(Qt.TextFormat.PlainText)  # names come from files and clipboards
        scale_font(name, 0.9, bold=True)
        self.details_label = QLabel(f"{image.width}×{image.height} · {format_size(image.size)}")
        self.details_label.setObjectName("AttachmentDetails")
        scale_font(self.details_label, 0.85)
        self.note_label = QLabel()
        self.note_label.setObjectName("ImageNote")
        self.note_label.setTextFormat(Qt.TextFormat.PlainText)  # quotes a model's name
        scale_font(self.note_label, 0.85)
        self._show_note()
        text = QVBoxLayout()
        text.setSpacing(0)
        text.addWidget(name)
        text.addWidget(self.details_label)
        text.addWidget(self.note_label)
        text.addStretch(1)
        row = QHBoxLayout(self)
        row.setContentsMargins(em(self, 0.3), em(self, 0.3), em(self, 0.3), em(self, 0.3))
        row.setSpacing(em(self, 0.45))
        row.addWidget(self.thumbnail)
        row.addLayout(text)
        self.remove_button: QToolButton | None = None
        if removable:
            self.remove_button = self._remove_button(image.name)
            row.addWidget(self.remove_button, 0, Qt.AlignmentFlag.AlignTop)
        self._edge = round(side * self.devicePixelRatioF())
        path = image.path
        self.thumbnail_shown = False  # the picture itself, not a placeholder
        self._placeholder("image" if path else "image-off")
        if path is not None:
            read = THUMBNAILS.cached(path, self._edge)
            if read is not None:
                self._show_thumbnail(read)
            else:  # decoded off the GUI thread, shown when it is in
                THUMBNAILS.ready.connect(self._thumbnail_ready)
                THUMBNAILS.request(path, self._edge)

    def _thumbnail_ready(self, path: str, edge: int) -> None:
        read = THUMBNAILS.cached(path, edge)
        if (path, edge) == (self.image.path, self._edge) and read is not None:
            THUMBNAILS.ready.disconnect(self._thumbnail_ready)
            self._show_thumbnail(read)

    def _show_thumbnail(self, read: ReadImage) -> None:
        if read.image is None:
            self.error = read.error
            self._placeholder("image-off")
            self._show_note()
            return
        pixmap = QPixmap.fromImage(read.image)
        pixmap.setDevicePixelRatio(self.devicePixelRatioF())
        self.thumbnail.setPixmap(pixmap)
        self.thumbnail_shown = True

    def _placeholder(self, icon: str) -> None:
        side = self.thumbnail.width() // 2
        self.thumbnail.setPixmap(themed_icon(icon).pixmap(QSize(side, side)))

    def _show_note(self) -> None:
        """The chip's last line and tooltip, for what is known of the file so far."""
        kind, note = image_note(self.image, self._blind, self.error)
        self.note = note
        self.note_label.setText(note)
        self.note_label.setProperty("kind", kind)
        self.note_label.style().unpolish(self.note_label)
        self.note_label.style().polish(self.note_label)
        self.note_label.setVisible(bool(note))
        self.setToolTip(self._tooltip(note))

    def _tooltip(self, note: str) -> str:
        name = self.image.name
        if self.image.path is None:
            return f"{name}: the image file is gone from the data folder"
        if self.error:
            return f"{name} cannot be shown: {self.error}"
        return f"{name}: click to see it full size" + (f" ({note})" if note else "")


class ImageChips(QWidget):
    """Image chips in rows that wrap. `removeRequested(index)` asks for one to go (only if
    `removable`); `align_right` for a user's message, whose bubble sits on the right."""

    removeRequested = Signal(int)

    def __init__(
        self, removable: bool, align_right: bool = False, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("ImageChips")
        self._removable = removable
        self._shown: tuple[tuple[ImageView, ...], str] = ((), "")
        self.chips: list[ImageChip] = []
        self._rows = FlowLayout(self, em(self, 0.4), align_right)
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.viewer: ImageViewer | None = None
        self.hide()

    def set_images(self, images: Sequence[ImageView], blind: str = "") -> None:
        """Show `images`; `blind` is what each chip says when the model cannot see them."""
        if self._shown == (tuple(images), blind):
            return
        # Chips that show what they showed stay: a scanned PDF's pages arrive one at a time,
        # and rebuilding every chip for each would make the fiftieth page cost fifty chips.
        kept = 0
        if blind == self._shown[1]:
            for chip, image in zip(self.chips, images, strict=False):
                if chip.image != image:
                    break
                kept += 1
        self._shown = (tuple(images), blind)
        for chip in self.chips[kept:]:
            chip.hide()
            chip.setParent(None)
            chip.deleteLater()
        del self.chips[kept:]
        for index, image in enumerate(images[kept:], kept):
            chip = ImageChip(image, self._removable, blind, self)
            chip.openRequested.connect(lambda c=chip: self.open_viewer(c))
            chip.removeRequested.connect(lambda i=index: self.removeRequested.emit(i))
            self._rows.addWidget(chip)
            self.chips.append(chip)
        self.setVisible(bool(self.chips))

    def open_viewer(self, chip: ImageChip) -> ImageViewer | None:
        """The full-size view of the chip's image (none for a file that is gone)."""
        if chip.image.path is None:
            return None
        self.viewer = ImageViewer(chip.image, self.window())
        self.viewer.show()
        return self.viewer
