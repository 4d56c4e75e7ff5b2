"""One attached image at full size: scaled down to fit the window (never up), with its real size
in pixels and bytes under it. Esc or Close shuts it.

The picture is read once when the viewer opens, decoded no larger than the screen (a 50-megapixel
photo is never held whole), and scaled again only when the window's size changes; a file Qt
cannot read shows why instead.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.sizes import format_size
from ui.chat.image_files import read_image
from ui.widgets.theme import em
from ui.widgets.view_models import ImageView

# The viewer opens at most this share of the screen it is on.
_SCREEN_SHARE = 0.8


class ImageViewer(QDialog):
    def __init__(self, image: ImageView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ImageViewer")
        self.setWindowTitle(image.name)
        self.setAccessibleName(f"Image {image.name}")
        screen = self.screen() or QGuiApplication.primaryScreen()
        self._room = screen.availableGeometry().size() * _SCREEN_SHARE
        whole = screen.size() * screen.devicePixelRatio()
        read = read_image(image.path, max(whole.width(), whole.height())) if image.path else None
        self._image: QImage | None = read.image if read else None
        self._view = image
        self.picture = QLabel()
        self.picture.setObjectName("ImageViewerPicture")
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picture.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self.picture.setMinimumSize(em(self, 8), em(self, 6))
        self.caption = QLabel()
        self.caption.setObjectName("EmptyHint")
        self.caption.setTextFormat(Qt.TextFormat.PlainText)  # the name came with the file
        if self._image is None:
            why = "the file is gone from the data folder" if read is None else read.error
            self.picture.setText(f"This image cannot be shown: {why}.")
            self.picture.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = self._layout = QVBoxLayout(self)
        layout.addWidget(self.picture, 1)
        layout.addWidget(self.caption)
        layout.addWidget(buttons)
        self.resize(self._opening_size())
        self._fit()

    @property
    def shown_scale(self) -> float:
        """The share of its real size the picture is shown at (1.0: not scaled down)."""
        pixmap = self.picture.pixmap()
        if self._image is None or pixmap.isNull() or not self._view.width:
            return 1.0
        return pixmap.width() / self._view.width

    def _opening_size(self) -> QSize:
        if self._image is None:
            return QSize(em(self, 30), em(self, 12))
        # The picture plus the caption and buttons, no larger than the room on the screen.
        wanted = self._image.size().grownBy(self._layout.contentsMargins())
        wanted.setHeight(wanted.height() + em(self, 5))
        return wanted.boundedTo(self._room).expandedTo(QSize(em(self, 24), em(self, 16)))

    def _fit(self) -> None:
        image, view = self._image, self._view
        if image is None:
            self.caption.setText(f"{view.name} · {format_size(view.size)}")
            return
        box = self.picture.size() * self.devicePixelRatioF()
        if image.width() > box.width() or image.height() > box.height():
            image = image.scaled(
                box, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
            )
        pixmap = QPixmap.fromImage(image)
        pixmap.setDevicePixelRatio(self.devicePixelRatioF())
        self.picture.setPixmap(pixmap)
        scale = self.shown_scale
        shown = "actual size" if scale >= 0.995 else f"shown at {scale:.0%}"
        self.caption.setText(
            f"{view.name} · {view.width}×{view.height} px · {format_size(view.size)} · {shown}"
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()
