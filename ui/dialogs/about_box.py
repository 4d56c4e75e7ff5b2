"""Help › About: what Branchwise is, and which version this is."""

from __future__ import annotations

import html
from importlib.metadata import PackageNotFoundError, version

from PySide6.QtWidgets import QMessageBox, QWidget


def app_version() -> str:
    """The installed version, or a plain word where the package metadata is missing (a source
    checkout run without installing)."""
    try:
        return version("branchwise")
    except PackageNotFoundError:
        return "development build"


def show_about(parent: QWidget) -> None:
    QMessageBox.about(
        parent,
        "About Branchwise",
        f"<b>Branchwise</b> {html.escape(app_version())}<br>Chat with language models on this "
        "computer. Every conversation is a tree: edits and regenerations keep every version, "
        "and switching between them is instant.",
    )
