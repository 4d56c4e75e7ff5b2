"""Listing a knowledge folder: the files it indexes, with their size and modification time (the
fast test of whether a file changed), and what was passed over and why.

Symbolic links are not followed unless the folder's option says so: a link can lead out of the
folder (indexing a person's whole home by accident) or back into it (a loop). When they are
followed, a folder already listed (by device and inode) is not listed again, so a loop ends.
Hidden files and folders (a name starting with a dot: `.git`, `.venv`) and dependency folders
(`node_modules`, `__pycache__`) are left out, as file managers and search tools leave them.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from app.knowledge.parsing.formats import Format, format_of
from app.knowledge.pause import CancelFlag
from app.knowledge.records import KnowledgeError

_LEFT_OUT_FOLDERS = frozenset({"node_modules", "__pycache__"})
_LINK = "A symbolic link: links are not followed unless the folder's option says so."
_LOOP = "A link back to a folder already indexed (a loop): not followed again."
# At most this many passed-over paths are listed in one report.
MAX_SKIPPED_LISTED = 1000


class FolderOffline(KnowledgeError):
    """The folder is not there (an unplugged disk, an unmounted share)."""


@dataclass(frozen=True, slots=True)
class FoundFile:
    path: str  # absolute
    size: int
    mtime_ns: int
    format: Format


@dataclass(frozen=True, slots=True)
class Scan:
    files: dict[str, FoundFile]
    skipped: tuple[tuple[str, str], ...]
    folders: tuple[str, ...]  # every folder listed, shallowest first (for a watcher)
    # Folders that could not be listed: what the index has from them is not taken for gone.
    unlisted: tuple[str, ...] = ()

    def may_hold(self, path: str) -> bool:
        """Whether `path` may still be there, unseen, in a folder that could not be listed."""
        return any(path.startswith(folder + os.sep) for folder in self.unlisted)


def scan_folder(root: Path, follow_links: bool, cancel: CancelFlag) -> Scan:
    """Everything under `root` (a folder, or one file) that a knowledge folder reads.
    FolderOffline when `root` is not there."""
    try:
        root_stat = root.stat()
    except FileNotFoundError as error:
        raise FolderOffline(f"{root} is not there (a disk unplugged?).") from error
    except OSError as error:
        raise FolderOffline(f"{root} cannot be read: {error.strerror or error}.") from error
    if not stat.S_ISDIR(root_stat.st_mode):
        return _single_file(root, root_stat)
    walk = _Walk(follow_links, cancel)
    walk.run(str(root), root_stat)
    return Scan(
        walk.files,
        tuple(walk.skipped[:MAX_SKIPPED_LISTED]),
        tuple(walk.folders),
        tuple(walk.unlisted),
    )


def found_file(path: Path) -> FoundFile | None:
    """The file at `path` as a scan finds it now, or None (gone, or not a kind read)."""
    kind = format_of(path)
    try:
        found = path.stat()
    except OSError:
        return None
    if kind is None or not stat.S_ISREG(found.st_mode):
        return None
    return FoundFile(str(path), found.st_size, found.st_mtime_ns, kind)


def _single_file(path: Path, found: os.stat_result) -> Scan:
    kind = format_of(path)
    if kind is None:
        return Scan({}, ((str(path), "Not a kind of file a knowledge folder reads."),), ())
    entry = FoundFile(str(path), found.st_size, found.st_mtime_ns, kind)
    return Scan({entry.path: entry}, (), ())


class _Walk:
    def __init__(self, follow_links: bool, cancel: CancelFlag) -> None:
        self._follow = follow_links
        self._cancel = cancel
        self._seen: set[tuple[int, int]] = set()
        self.files: dict[str, FoundFile] = {}
        self.skipped: list[tuple[str, str]] = []
        self.folders: list[str] = []
        self.unlisted: list[str] = []

    def run(self, root: str, root_stat: os.stat_result) -> None:
        self._seen.add((root_stat.st_dev, root_stat.st_ino))
        pending = deque([root])
        while pending:
            if self._cancel.is_set():
                return
            folder = pending.popleft()
            self.folders.append(folder)
            try:
                with os.scandir(folder) as entries:
                    listed = list(entries)
            except FileNotFoundError:
                if folder == root:
                    raise FolderOffline(f"{root} went away while it was listed.") from None
                continue  # removed meanwhile: nothing left to index there
            except OSError as error:
                self.skipped.append((folder, f"Could not be listed: {error.strerror or error}."))
                self.unlisted.append(folder)
                continue
            for entry in sorted(listed, key=lambda e: e.name):
                if entry.name.startswith(".") or entry.name in _LEFT_OUT_FOLDERS:
                    continue
                subfolder = self._entry(entry)
                if subfolder is not None:
                    pending.append(subfolder)

    def _entry(self, entry: os.DirEntry[str]) -> str | None:
        """Note the file `entry`; return it when it is a folder to list."""
        try:
            link = entry.is_symlink()
            if link and not self._follow:
                if format_of(Path(entry.name)) is not None or entry.is_dir():
                    self.skipped.append((entry.path, _LINK))
                return None
            found = entry.stat(follow_symlinks=True)
        except OSError:
            return None  # gone meanwhile, or a link to nothing
        if stat.S_ISDIR(found.st_mode):
            key = (found.st_dev, found.st_ino)
            if key in self._seen:
                self.skipped.append((entry.path, _LOOP))
                return None
            self._seen.add(key)
            return entry.path
        kind = format_of(Path(entry.name))
        if kind is not None and stat.S_ISREG(found.st_mode):
            self.files[entry.path] = FoundFile(entry.path, found.st_size, found.st_mtime_ns, kind)
        return None
