"""Opening a person's file with the system's handler, or showing it (or a folder) in the file
manager: from a button or a menu, never from a link inside rendered text."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QProcess, QUrl
from PySide6.QtGui import QDesktopServices


def open_file(path: str) -> bool:
    """Open `path` with the system's handler for it."""
    return QDesktopServices.openUrl(QUrl.fromLocalFile(path))


def reveal_file(path: str) -> bool:
    """Show `path` in its folder: selected in the Finder on macOS, else the folder opened."""
    if sys.platform == "darwin":
        return QProcess.startDetached("/usr/bin/open", ["-R", path])[0]
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(path).parent)))


def show_in_file_manager(path: str) -> bool:
    """A folder opened in the file manager; a file shown in its folder (`reveal_file`)."""
    if Path(path).is_dir():
        return QDesktopServices.openUrl(QUrl.fromLocalFile(path))
    return reveal_file(path)
