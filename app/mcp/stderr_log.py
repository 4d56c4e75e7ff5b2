"""Where a stdio server's stderr goes (a file it writes to directly: the SDK hands the child a
real file descriptor), and its last lines, shown when the server fails. Servers log freely on
stderr; nothing there is taken for an error by itself."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import IO, TextIO

TAIL_LINES = 20
_TAIL_BYTES = 16 * 1024
_LINE_CHARS = 500


def open_log(path: Path | None) -> TextIO:
    """The server's log file, emptied for this start; None: a temporary file."""
    if path is None:
        return tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("w+", encoding="utf-8", errors="replace")


def tail(file: IO[str]) -> tuple[str, ...]:
    """The last non-blank lines of the log (read by position, so the file's own offset is left
    alone), each cut to a sane length."""
    if file.closed:
        return ()
    try:
        file.flush()
        descriptor = file.fileno()
        size = os.fstat(descriptor).st_size
        data = os.pread(descriptor, _TAIL_BYTES, max(0, size - _TAIL_BYTES))
    except OSError:
        return ()
    lines = data.decode("utf-8", "replace").splitlines()
    if size > _TAIL_BYTES and lines:
        lines = lines[1:]  # the first may be cut
    return tuple(line[:_LINE_CHARS] for line in lines if line.strip())[-TAIL_LINES:]
