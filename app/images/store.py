"""The image store: each image's bytes kept once under `<data folder>/images/<sha[:2]>/<sha256>`,
however many messages, branches or conversations attach it.

Bytes are checked before they are kept: a format Pillow reads and the app accepts (PNG, JPEG,
WebP, GIF, BMP, TIFF, and HEIC where Pillow has a plug-in for it), at most 64 MiB and 64
megapixels (more is refused as a possible decompression bomb before a pixel is decoded), and
whole (a truncated file is refused, not padded). A refusal is an `ImageError` naming the file.
Width and height are those the picture shows with, after its EXIF orientation. Files are written
atomically and readable by their owner only, like the app's other data files.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.kept_files import write_atomically

MAX_IMAGE_BYTES = 64 * 1024 * 1024
# 64 megapixels: an 8K screenshot is 33 MP, a large phone photo 50 MP (the engine's own limit).
MAX_PIXELS = 64_000_000
# Pillow's format names; MPO is the JPEG some cameras write (a JPEG with a second frame).
FORMATS = frozenset({"PNG", "JPEG", "MPO", "WEBP", "GIF", "BMP", "TIFF", "HEIF"})
FORMATS_TEXT = "PNG, JPEG, WebP, GIF, BMP and TIFF"
# An image kept this recently is never collected: a composer may hold it, or an import in another
# process may be about to write the messages naming it.
GRACE_S = 3600.0
_DIGEST = re.compile(r"[0-9a-f]{64}")
# EXIF orientations that turn the picture a quarter: width and height trade places.
_QUARTER_TURNS = frozenset({5, 6, 7, 8})


class ImageError(Exception):
    """An image that cannot be attached or found; the message names it, for the person."""


@dataclass(frozen=True)
class StoredImage:
    """One kept image: its digest, the name it was attached under, its size in bytes, the size
    it shows at (after EXIF orientation) and Pillow's name for its format ("PNG", "JPEG"…)."""

    sha256: str
    name: str
    size: int
    width: int
    height: int
    format: str

    def as_record(self, tokens: int) -> dict[str, Any]:
        """The attachment record a message keeps (in the same list as attached text files)."""
        return {
            "kind": "image",
            "name": self.name,
            "size": self.size,
            "sha256": self.sha256,
            "width": self.width,
            "height": self.height,
            "format": self.format,
            "tokens": tokens,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> StoredImage:
        """The image an attachment record names; ImageError for a record that is not one."""
        if not is_image_record(record):
            raise ImageError("The attachment is not an image.")
        try:
            return cls(
                str(record["sha256"]),
                str(record["name"]),
                int(record["size"]),
                int(record["width"]),
                int(record["height"]),
                str(record["format"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ImageError(f"The image record {record.get('name')!r} is incomplete.") from exc


def is_image_record(record: object) -> bool:
    return isinstance(record, dict) and record.get("kind") == "image"


class ImageStore:
    """The images of one data folder (the database's folder)."""

    def __init__(self, data_dir: Path) -> None:
        self.root = Path(data_dir) / "images"

    def add_file(self, path: str | Path) -> StoredImage:
        """Keep the image at `path` (named by its file name)."""
        path = Path(path)
        try:
            if not path.is_file():
                raise ImageError(f"{path.name} is not a file.")
            if path.stat().st_size > MAX_IMAGE_BYTES:
                raise ImageError(_too_large(path.name))
            data = path.read_bytes()
        except OSError as exc:
            raise ImageError(f"{path.name} could not be read: {exc.strerror or exc}.") from exc
        return self.add_bytes(data, path.name)

    def add_bytes(self, data: bytes, name: str) -> StoredImage:
        """Keep `data` as it is (a pasted picture: the PNG bytes the clipboard gave)."""
        width, height, kind = inspect(data, name)
        digest = hashlib.sha256(data).hexdigest()
        target = self.path(digest)
        try:
            if target.is_file() and target.stat().st_size == len(data):
                os.utime(target)  # attached again: young again, for the collector's grace
            else:
                write_atomically(target, data)
        except OSError as exc:
            raise ImageError(f"{name} could not be saved: {exc.strerror or exc}.") from exc
        return StoredImage(digest, name, len(data), width, height, kind)

    def path(self, sha256: str) -> Path:
        """Where the image with this digest is kept (whether or not it is there)."""
        if not _DIGEST.fullmatch(sha256):
            # Digests come from records, and records from import files: never a path out.
            raise ImageError(f"{sha256[:80]!r} is not an image's SHA-256 digest.")
        return self.root / sha256[:2] / sha256

    def exists(self, sha256: str) -> bool:
        return _DIGEST.fullmatch(sha256) is not None and self.path(sha256).is_file()

    def read(self, sha256: str, name: str) -> bytes:
        """The bytes of a kept image; ImageError naming it (`name`) when it is gone."""
        try:
            return self.path(sha256).read_bytes()
        except FileNotFoundError as exc:
            raise ImageError(f"The image {name} is missing from the data folder.") from exc
        except OSError as exc:
            raise ImageError(f"The image {name} could not be read: {exc.strerror}.") from exc

    def remove_unreferenced(self, referenced: set[str], *, older_than_s: float = GRACE_S) -> int:
        """Delete the kept images no digest in `referenced` names, except those kept or attached
        again in the last `older_than_s` seconds; returns how many went."""
        if not self.root.is_dir():
            return 0
        cutoff = time.time() - older_than_s
        removed = 0
        for folder in self.root.iterdir():
            if not folder.is_dir():
                continue
            for file in folder.iterdir():
                if not _DIGEST.fullmatch(file.name) or file.name in referenced:
                    continue
                with contextlib.suppress(FileNotFoundError):
                    if file.stat().st_mtime <= cutoff:
                        file.unlink()
                        removed += 1
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty
        return removed


def inspect(data: bytes, name: str) -> tuple[int, int, str]:
    """(width, height as shown, format) of an image's bytes, or ImageError saying why not."""
    # Imported here: the store opens (and the window shows) without loading Pillow.
    from PIL import Image, UnidentifiedImageError

    if not data:
        raise ImageError(f"{name} is empty.")
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageError(_too_large(name))
    bomb = ImageError(
        f"{name} has more than {MAX_PIXELS // 1_000_000} megapixels; it is refused as a possible "
        "decompression bomb."
    )
    try:
        with warnings.catch_warnings():
            # Pillow warns past its own limit before a pixel is decoded: refuse there.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            opened = Image.open(io.BytesIO(data))
    except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        raise bomb from exc
    except UnidentifiedImageError as exc:
        raise ImageError(f"{name} is not an image this app can read ({FORMATS_TEXT}).") from exc
    except (OSError, ValueError, SyntaxError) as exc:
        raise ImageError(f"{name} is damaged or truncated: {exc}") from exc
    with opened:
        kind = opened.format or ""
        if kind not in FORMATS:
            raise ImageError(f"{name} is a {kind} image; only {FORMATS_TEXT} can be attached.")
        width, height = opened.size
        if width * height > MAX_PIXELS:
            raise bomb
        try:
            opened.seek(0)  # the first frame of an animation is the one shown
            opened.load()
            orientation = opened.getexif().get(0x0112)
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
            raise ImageError(f"{name} is damaged or truncated: {exc}") from exc
    if orientation in _QUARTER_TURNS:
        width, height = height, width
    return width, height, "JPEG" if kind == "MPO" else kind


def _too_large(name: str) -> str:
    return f"{name} is too large to attach (the limit is {MAX_IMAGE_BYTES // 1024 // 1024} MiB)."
