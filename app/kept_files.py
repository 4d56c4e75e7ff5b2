"""Small files in the data folder that must never be lost: each is replaced atomically (a crash
mid-write leaves the old file or the new one, never half of either), and one that cannot be read
is kept aside under a new name rather than overwritten or deleted.

Standard library only, so every `app` package may use it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path


def free_name(path: Path, label: str) -> Path:
    """A name beside `path` that nothing has yet: `<name>.<label>-<time>` (with a counter)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate = path.with_name(f"{path.name}.{label}-{stamp}")
    counter = 2
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.{label}-{stamp}-{counter}")
        counter += 1
    return candidate


def set_aside(path: Path, label: str = "unreadable") -> Path:
    """Rename `path` out of the way (never delete it) and return its new name."""
    target = free_name(path, label)
    path.rename(target)
    return target


def replace_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` (UTF-8) as `write_atomically` does."""
    write_atomically(path, text.encode("utf-8"))


def write_atomically(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file in the same folder, synced and renamed
    over it. The file is readable only by its owner (0600), from the first byte: some of these
    files hold API keys or a server's environment."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
