"""Members of a zip file (a DOCX, an EPUB) read within limits, checked before anything is
decompressed: a zip bomb named `.docx` is refused by its own directory, not discovered by
filling the memory.

The directory's entry count is read from the end record before `zipfile` lists the entries (a
forged count would have it build millions of them). Each member read must be small enough,
compress by a plausible ratio, be unencrypted and fit in what one document may decompress in
all; `zipfile` itself never inflates a member past the size its entry declares, so a declared
size that lies only cuts the member short.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Iterator
from typing import BinaryIO

from app.knowledge.parsing.blocks import UnreadableDocument
from app.sizes import format_size

MAX_MEMBERS = 20_000
MAX_MEMBER_BYTES = 64 * 1024 * 1024
MAX_TOTAL_BYTES = 512 * 1024 * 1024
# Text compresses ten to twenty times; a member inflating a hundredfold past a megabyte is a bomb.
MAX_RATIO = 100
RATIO_FLOOR_BYTES = 1024 * 1024
READ_BYTES = 1024 * 1024
_END_RECORD = b"PK\x05\x06"
_END_RECORD_BYTES = 22
_MAX_COMMENT_BYTES = 0xFFFF


class SafeZip:
    """A zip file opened for reading members within the limits above; every refusal is an
    UnreadableDocument naming `what` the file claims to be ("Word document")."""

    def __init__(self, raw: BinaryIO, what: str) -> None:
        self._what = what
        entries = _entry_count(raw)
        if entries is None:
            raise UnreadableDocument(f"It is not a readable {what} (not a zip file, or damaged).")
        if entries > MAX_MEMBERS:
            raise UnreadableDocument(
                f"It is not a {what} that can be read safely: its zip directory lists "
                f"{entries:,} files (at most {MAX_MEMBERS:,})."
            )
        try:
            self._zip = zipfile.ZipFile(raw)
        except (zipfile.BadZipFile, zlib.error, EOFError, ValueError) as error:
            raise UnreadableDocument(f"It is not a readable {what}: {error}.") from error
        self._inflated = 0

    def __contains__(self, name: str) -> bool:
        return name in self._zip.NameToInfo

    def read(self, name: str, limit: int = MAX_MEMBER_BYTES) -> bytes:
        return b"".join(self.pieces(name, limit))

    def pieces(self, name: str, limit: int = MAX_MEMBER_BYTES) -> Iterator[bytes]:
        """The member `name`, a piece at a time, once its entry passes the checks."""
        info = self._checked(name, limit)
        try:
            with self._zip.open(info) as member:
                while data := member.read(READ_BYTES):
                    yield data
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as error:
            raise UnreadableDocument(f"It is a damaged {self._what}: {name}: {error}.") from error

    def _checked(self, name: str, limit: int) -> zipfile.ZipInfo:
        info = self._zip.NameToInfo.get(name)
        if info is None:
            raise UnreadableDocument(f"It is not a readable {self._what}: {name} is missing.")
        refusal = f"It is not a {self._what} that can be read safely: {name}"
        if info.flag_bits & 0x1:
            raise UnreadableDocument(f"It is password-protected ({name} is encrypted).")
        if info.file_size > limit:
            raise UnreadableDocument(
                f"{refusal} would inflate to {format_size(info.file_size)} (at most "
                f"{format_size(limit)})."
            )
        if info.file_size > RATIO_FLOOR_BYTES and info.file_size > MAX_RATIO * max(
            info.compress_size, 1
        ):
            raise UnreadableDocument(
                f"{refusal} would inflate {info.file_size // max(info.compress_size, 1):,} "
                "times (a zip bomb?)."
            )
        self._inflated += info.file_size
        if self._inflated > MAX_TOTAL_BYTES:
            raise UnreadableDocument(
                f"{refusal}: its parts would inflate to more than {format_size(MAX_TOTAL_BYTES)}."
            )
        return info


def _entry_count(raw: BinaryIO) -> int | None:
    """The number of entries the zip's end record declares, or None when there is no end
    record. (A Zip64 archive declares 0xFFFF here, more than MAX_MEMBERS: no document needs
    one.)"""
    size = raw.seek(0, 2)
    tail_size = min(size, _END_RECORD_BYTES + _MAX_COMMENT_BYTES)
    raw.seek(size - tail_size)
    tail = raw.read(tail_size)
    raw.seek(0)
    at = tail.rfind(_END_RECORD)
    if at < 0 or len(tail) - at < _END_RECORD_BYTES:
        return None
    (entries,) = struct.unpack_from("<H", tail, at + 10)
    return entries
