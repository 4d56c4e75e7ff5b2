"""Attached images read with Qt: thumbnails for the chips and the whole picture for the viewer.

The files are untrusted (an image from the web, an import, a data folder someone edited): Qt's
`QImageReader` decodes them, a file it cannot read comes back as its error text, never an
exception. Every read turns the picture by its EXIF orientation (`setAutoTransform`), so a phone
photo stands the way it was taken.

A thumbnail is decoded at its small size (`setScaledSize`: JPEG decoders scale while they read)
once per file and size, on a thread of its own (a big PNG takes a tenth of a second, which the
GUI thread would stall for), then kept here, so a chat re-rendered or repainted never reads an
image file again; the whole picture is read only when the viewer opens.
"""

from __future__ import annotations

from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QObject, QSize, Qt, Signal
from PySide6.QtGui import QImage, QImageReader, QImageWriter

# Thumbnails kept (a few KB each at chip size): more than a long chat shows at once.
_KEPT_THUMBNAILS = 256
# Decoders that cannot scale while they read (PNG) hold the whole picture first: room for the
# largest the image store accepts (64 megapixels at 4 bytes), past Qt's default of 256 MB.
_DECODE_LIMIT_MB = 320


@dataclass(frozen=True)
class ReadImage:
    """A decoded picture, or why there is none (`image` is None then)."""

    image: QImage | None
    error: str = ""


def read_image(path: str, longest_edge: int | None = None) -> ReadImage:
    """The picture at `path`, turned by its EXIF orientation; with `longest_edge`, decoded no
    larger than that many pixels on its longest side."""
    reader = QImageReader(path)
    reader.setAutoTransform(True)
    reader.setAllocationLimit(_DECODE_LIMIT_MB)
    size = reader.size()
    if longest_edge and size.isValid() and max(size.width(), size.height()) > longest_edge:
        box = QSize(longest_edge, longest_edge)
        reader.setScaledSize(size.scaled(box, Qt.AspectRatioMode.KeepAspectRatio))
    image = reader.read()
    if image.isNull():
        return ReadImage(None, reader.errorString() or "Qt cannot read this file")
    return ReadImage(image)


class ThumbnailCache(QObject):
    """Thumbnails by (file, longest edge in device pixels), least recently used dropped first.
    Image files are named by their digest, so a file's thumbnail never goes stale.

    `request` decodes one that is not kept yet on the cache's own thread (`QImage` may be made
    on any thread; only pixmaps belong to the GUI thread) and `ready(path, longest_edge)` says
    on the GUI thread when `cached` has it."""

    ready = Signal(str, int)
    # (key, ReadImage) from the decoding thread, received on the thread the cache lives on.
    _decoded = Signal(object, ReadImage)

    def __init__(self, limit: int = _KEPT_THUMBNAILS) -> None:
        super().__init__()
        self._limit = limit
        self._kept: OrderedDict[tuple[str, int], ReadImage] = OrderedDict()
        self._pending: set[tuple[str, int]] = set()
        self._decoder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="thumbnails")
        self._decoded.connect(self._keep)
        self.reads = 0  # files decoded so far: what the cache saves is visible to tests

    def cached(self, path: str, longest_edge: int) -> ReadImage | None:
        key = (path, longest_edge)
        found = self._kept.get(key)
        if found is not None:
            self._kept.move_to_end(key)
        return found

    def request(self, path: str, longest_edge: int) -> None:
        """Decode the thumbnail unless it is kept or already on its way."""
        key = (path, longest_edge)
        if key in self._kept or key in self._pending:
            return
        self._pending.add(key)
        self.reads += 1
        self._decoder.submit(lambda: self._decoded.emit(key, read_image(path, longest_edge)))

    def _keep(self, key: tuple[str, int], found: ReadImage) -> None:
        self._pending.discard(key)
        self._kept[key] = found
        if len(self._kept) > self._limit:
            self._kept.popitem(last=False)
        self.ready.emit(*key)


# One for the whole app: the composer's chips and the chat's show the same files.
THUMBNAILS = ThumbnailCache()


def png_data(image: QImage) -> bytes:
    """A pasted picture as PNG bytes: lossless, and what the image store keeps as it is."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    # A writer, not `image.save(buffer, "PNG")`: PySide6 types save's format as bytes, yet takes
    # only a str there; the writer takes bytes as typed, and writes the same PNG.
    QImageWriter(buffer, b"PNG").write(image)
    buffer.close()
    return bytes(data.data())  # typed bytes | bytearray | memoryview, which is bytes here


# Formats Pillow (the image store, the model's processor) may not read where Qt can: a Mac's
# HEIC photos through Qt's image plugins. They are kept as PNG, decoded by Qt.
_QT_CONVERTED = (".heic", ".heif")


def converted_for_store(path: str) -> tuple[bytes, str] | None:
    """A photo in a format only Qt may read, as PNG bytes and a name for them, or None when it
    need not (or cannot) be converted: the store then reads the file and says why it cannot."""
    file = Path(path)
    if file.suffix.lower() not in _QT_CONVERTED:
        return None
    found = read_image(path)
    if found.image is None:
        return None
    return png_data(found.image), f"{file.stem}.png"
