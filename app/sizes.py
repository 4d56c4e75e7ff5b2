"""Byte counts as people read them.

Two conventions, each where people expect it: a file's size in binary units (as file managers
on Linux and Windows show an attachment), memory and disk in decimal units (as the status bar,
the library and the download dialog compare them with the machine's RAM and free space).
"""

from __future__ import annotations


def format_size(size: int) -> str:
    """Bytes as a person reads them: 812 B, 14.2 KB, 3.1 MB."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def format_bytes(count: float) -> str:
    """Memory or disk bytes: 812 B, 14.2 KB, 3.1 GB (decimal units, at most GB)."""
    for unit in ("B", "KB", "MB", "GB"):
        if abs(count) < 1000 or unit == "GB":
            return f"{count:,.0f} {unit}" if unit == "B" else f"{count:,.1f} {unit}"
        count /= 1000
    raise AssertionError("unreachable")
