"""Showing and hiding a widget only when that changes something."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget


def set_shown(widget: QWidget, shown: bool) -> None:
    """Show or hide `widget`, doing nothing when it already is as asked."""
    # setVisible is not free on a shown parent; most updates change nothing.
    if widget.isHidden() == shown:
        widget.setVisible(shown)
