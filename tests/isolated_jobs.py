"""Jobs for tests/test_isolated.py, run in child processes: each stands for one way a native
reader can end (a result, an error, a crash, a hang). Only the standard library, so a child
starts in a fraction of a second."""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Callable
from pathlib import Path


def count_to(total: int, progress: Callable[[int, int], None]) -> str:
    for done in range(1, total + 1):
        progress(done, total)
    return f"counted to {total}"


def refuse(message: str) -> None:
    raise ValueError(message)


def crash() -> None:
    """What MLX's GGUF reader did with a huge tensor count: read memory it does not own."""
    ctypes.string_at(0)


def hang() -> None:
    while True:
        time.sleep(0.05)


def hang_after_writing_pid(path: Path) -> None:
    path.write_text(str(os.getpid()))
    hang()
