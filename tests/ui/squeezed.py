"""Rows of a form drawn shorter than their field and hint need: Qt squeezes a form into a window
too short for it, and each hint then overlaps the row below."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from ui.forms.sampling_fields import HintedField


def squeezed_rows(widget: QWidget) -> list[str]:
    """The hints of `widget`'s visible rows that are shorter than they need at their width."""
    return [
        row.hint.text()
        for row in widget.findChildren(HintedField)
        if row.isVisible() and row.height() < row.heightForWidth(row.width())
    ]
