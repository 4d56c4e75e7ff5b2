"""A QTextBrowser hardened for untrusted model output, sized to its content.

QTextBrowser would follow links itself and read any file an image or style sheet names:
returning None from `loadResource` makes QTextDocument read the file on its own
(`file:///dev/zero` then aborts the process), and for images even an empty QByteArray is not
enough: Qt's image handler, given bytes it cannot decode, loads the file by name (verified with
PySide6 6.12: a 400-pixel PNG still appeared). So images get a 1x1 transparent placeholder and
every other resource an empty QByteArray; links only open http/https URLs in the system browser,
`copy:N` anchors copy a code block and `source:N` anchors (a reply's citations) are reported.
The Markdown renderer emits no <img> or <link> at all; this is the second line of defence.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

from PySide6.QtCore import QByteArray, QRect, QSize, QSizeF, Qt, QUrl, Signal, Slot
from PySide6.QtGui import (
    QCursor,
    QDesktopServices,
    QGuiApplication,
    QImage,
    QPainter,
    QPaintEvent,
    QPalette,
    QTextCursor,
    QTextDocument,
    QTextOption,
    QWheelEvent,
)
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QToolTip, QWidget

from ui.text.markdown_render import (
    COPY_SCHEME,
    SOURCE_SCHEME,
    code_blocks,
    is_safe_link,
    render,
)


@cache
def _placeholder_image() -> QImage:
    image = QImage(1, 1, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    return image


class SafeBrowser(QTextBrowser):
    """Shows Markdown or plain text; its height always fits the content, so it never scrolls."""

    codeCopied = Signal(int)
    sourceClicked = Signal(int)  # a citation [N] of the reply's sources

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._markdown = ""
        self.citations = 0  # the reply's sources, whose [N] become links (set before rendering)
        self._streaming = False  # a reply still being written: a cursor shows where it goes on
        self._height_limit: int | None = None  # a long message shown collapsed
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setLineWrapMode(QTextBrowser.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.viewport().setAutoFillBackground(False)
        document = self.document()
        document.setDocumentMargin(0)
        document.setUndoRedoEnabled(False)
        document.setIndentWidth(1.5 * self.fontMetrics().horizontalAdvance("M"))
        document.documentLayout().documentSizeChanged.connect(self._fit_height)
        self.anchorClicked.connect(self._on_anchor_clicked)

    def set_markdown(self, text: str, dark: bool, streaming: bool = False) -> None:
        self._markdown = text
        self._streaming = streaming
        self.setHtml(render(text, dark, streaming, self.citations))

    def set_plain_text(self, text: str) -> None:
        self._markdown = ""
        self.citations = 0  # the reply's sources, whose [N] become links (set before rendering)
        self._streaming = False
        self.setPlainText(text)

    def stream_cursor_rect(self) -> QRect | None:
        """Where the streaming cursor is drawn (after the last character), or None when the
        text is not streaming. Painted over the text, never part of it: copying and the
        text itself stay exactly the model's."""
        if not self._streaming or self.document().isEmpty():
            return None
        end = QTextCursor(self.document())
        end.movePosition(QTextCursor.MoveOperation.End)
        # A code block is a frame, and a document has an empty line after its last frame: the
        # cursor goes after the last character written, not there.
        while not end.block().text() and end.movePosition(QTextCursor.MoveOperation.PreviousBlock):
            end.movePosition(QTextCursor.MoveOperation.EndOfBlock)
        line = self.cursorRect(end)
        width = max(2, line.height() // 3)
        return QRect(line.left() + width // 2, line.top(), width, line.height())

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        cursor = self.stream_cursor_rect()
        if cursor is not None:
            color = self.palette().color(QPalette.ColorRole.Text)
            color.setAlpha(150)
            QPainter(self.viewport()).fillRect(cursor, color)

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        # Never None, and never undecodable bytes for an image: Qt would read the file itself.
        if type == QTextDocument.ResourceType.ImageResource.value:
            return _placeholder_image()
        return QByteArray()

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self._content_height())

    def minimumSizeHint(self) -> QSize:
        return QSize(self.fontMetrics().horizontalAdvance("M" * 4), self._content_height())

    def wheelEvent(self, event: QWheelEvent) -> None:
        # It never scrolls itself; let the chat's scroll area have the wheel.
        event.ignore()

    def _content_height(self) -> int:
        margins = self.contentsMargins()
        height = self.document().documentLayout().documentSize().height()
        return math.ceil(height) + margins.top() + margins.bottom()

    def set_height_limit(self, pixels: int | None) -> None:
        """Show at most `pixels` of the text (None: all of it)."""
        self._height_limit = pixels
        self._fit_height()

    @Slot(QSizeF)
    def _fit_height(self, _size: QSizeF | None = None) -> None:
        height = self._content_height()
        if self._height_limit is not None:
            height = min(height, self._height_limit)
        if height != self.height() or self.minimumHeight() != height:
            self.setFixedHeight(height)

    @Slot(QUrl)
    def _on_anchor_clicked(self, url: QUrl) -> None:
        if url.scheme() == COPY_SCHEME:
            self._copy_code_block(url.path())
        elif url.scheme() == SOURCE_SCHEME and url.path().isdigit():
            self.sourceClicked.emit(int(url.path()))
        elif is_safe_link(url.toString()):
            QDesktopServices.openUrl(url)

    def _copy_code_block(self, number_text: str) -> None:
        blocks = code_blocks(self._markdown)
        if not number_text.isdigit() or int(number_text) >= len(blocks):
            return
        number = int(number_text)
        QGuiApplication.clipboard().setText(blocks[number])
        QToolTip.showText(QCursor.pos(), "Code copied", self)
        self.codeCopied.emit(number)
