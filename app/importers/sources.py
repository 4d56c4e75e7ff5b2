"""What a person points the importer at — one file, a zip, or a folder — as a list of members,
with the checks that make a hostile zip harmless: member names that are absolute, climb out
with `..` or are links are refused, and so are archives whose sizes or compression ratios are
beyond any real export (zip bombs). Nothing is extracted to disk."""

from __future__ import annotations

import os
import stat
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING

from app.importers.errors import ImportRefusedError

if TYPE_CHECKING:
    from _typeshed import SupportsRead

MAX_MEMBERS = 200_000
MAX_TOTAL_BYTES = 32 * 1024**3  # uncompressed, the whole archive
MAX_MEMBER_BYTES = 8 * 1024**3  # one file: the largest real conversations.json seen was 1.7 GB
MAX_RATIO = 200  # uncompressed / compressed, above 1 MB (JSON compresses ~10-20 times)
_RATIO_FLOOR = 1024 * 1024
_READ_ERRORS = (OSError, EOFError, zipfile.BadZipFile, zlib.error, RuntimeError)


@dataclass(frozen=True, slots=True)
class Member:
    """A file inside the source; `name` is relative, with "/" separators."""

    name: str
    size: int
    source: Source

    @property
    def basename(self) -> str:
        return self.name.rsplit("/", 1)[-1]

    @property
    def where(self) -> str:
        return self.name if self.source.kind == "file" else f"{self.source.path.name}/{self.name}"

    @contextmanager
    def open(self) -> Iterator[SupportsRead[bytes]]:
        try:
            stream = self.source.open_member(self.name)
        except _READ_ERRORS as exc:
            raise ImportRefusedError(f"{self.where} could not be read: {exc}.") from None
        try:
            yield _Checked(stream, self.where)
        finally:
            stream.close()

    def read(self, limit: int) -> bytes:
        if self.size > limit:
            raise ImportRefusedError(f"{self.where} is larger than expected ({self.size:,} bytes).")
        with self.open() as stream:
            return stream.read(limit + 1)[:limit]


class _Checked:
    """Turns read errors (a damaged zip, a vanished file) into ImportRefusedError."""

    def __init__(self, stream: IO[bytes], where: str) -> None:
        self._stream = stream
        self._where = where

    def read(self, size: int = -1) -> bytes:
        try:
            return self._stream.read(size)
        except _READ_ERRORS as exc:
            raise ImportRefusedError(f"{self._where} could not be read: {exc}.") from None


class Source:
    """Use `open_source(path)`; close it (or use `with`)."""

    def __init__(self, path: Path, kind: str, members: list[Member] | None = None) -> None:
        self.path = path
        self.kind = kind  # "file", "zip" or "folder"
        self._zip: zipfile.ZipFile | None = None
        self.members: list[Member] = members or []

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()
            self._zip = None

    def member(self, name: str) -> Member | None:
        for member in self.members:
            if member.name == name:
                return member
        return None

    def open_member(self, name: str) -> IO[bytes]:
        if self._zip is not None:
            return self._zip.open(name)
        if self.kind == "file":
            return self.path.open("rb")
        return (self.path / name).open("rb")


def open_source(path: Path) -> Source:
    """The file, zip or folder at `path`; refuses what cannot be read or is unsafe."""
    try:
        if path.is_symlink() and not path.exists():
            raise ImportRefusedError(f"{path} is a broken link.")
        if path.is_dir():
            return _folder(path)
        if not path.is_file():
            raise ImportRefusedError(f"{path} does not exist or is not a file or folder.")
        if zipfile.is_zipfile(path):
            return _zip(path)
        source = Source(path, "file")
        source.members = [Member(path.name, path.stat().st_size, source)]
        return source
    except OSError as exc:
        raise ImportRefusedError(f"{path} could not be read: {exc}.") from None


def _folder(path: Path) -> Source:
    source = Source(path, "folder")
    for root, dirs, files in os.walk(path, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            full = Path(root, name)
            if full.is_symlink() or not full.is_file():
                continue  # a link could lead anywhere on the disk: not part of the export
            if len(source.members) >= MAX_MEMBERS:
                raise ImportRefusedError(f"{path} holds more than {MAX_MEMBERS:,} files.")
            relative = full.relative_to(path).as_posix()
            source.members.append(Member(relative, full.stat().st_size, source))
    return source


def _zip(path: Path) -> Source:
    source = Source(path, "zip")
    try:
        archive = zipfile.ZipFile(path)
    except _READ_ERRORS as exc:
        raise ImportRefusedError(f"{path.name} is not a readable zip file: {exc}.") from None
    source._zip = archive
    try:
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise ImportRefusedError(f"{path.name} holds more than {MAX_MEMBERS:,} files.")
        total = 0
        for info in infos:
            _check_member(path.name, info)
            if info.is_dir():
                continue
            total += info.file_size
            if total > MAX_TOTAL_BYTES:
                raise ImportRefusedError(
                    f"{path.name} unpacks to more than {MAX_TOTAL_BYTES // 1024**3} GB; "
                    "that is not a chat export (a zip bomb?)."
                )
            source.members.append(Member(info.filename, info.file_size, source))
    except BaseException:
        source.close()
        raise
    return source


def _check_member(archive: str, info: zipfile.ZipInfo) -> None:
    name = info.filename
    where = f"{archive}: the entry {name!r}"
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if (
        not name
        or "\x00" in name
        or name.startswith(("/", "\\"))
        or (len(name) > 1 and name[1] == ":")
        or ".." in parts
    ):
        raise ImportRefusedError(f"{where} points outside the archive; the zip was refused.")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise ImportRefusedError(f"{where} is a link; the zip was refused.")
    if info.file_size > MAX_MEMBER_BYTES:
        raise ImportRefusedError(f"{where} is too large ({info.file_size:,} bytes).")
    compressed = max(info.compress_size, 1)
    if info.file_size > _RATIO_FLOOR and info.file_size / compressed > MAX_RATIO:
        raise ImportRefusedError(
            f"{where} expands {info.file_size // compressed}-fold; a zip bomb was refused."
        )
