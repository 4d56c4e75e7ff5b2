"""Plain-text editors that grow with their text, a line at a time, up to a limit."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPlainTextEdit


def fit_to_text(edit: QPlainTextEdit, min_lines: int, max_lines: int) -> None:
    """Make `edit` exactly as tall as its text (as laid out now), between the two limits;
    past `max_lines` it scrolls. Call it whenever the text changes."""
    lines = max(1, int(edit.document().size().height()))
    policy = Qt.ScrollBarPolicy
    edit.setVerticalScrollBarPolicy(
        policy.ScrollBarAsNeeded if lines > max_lines else policy.ScrollBarAlwaysOff
    )
    visible = min(max(lines, min_lines), max_lines)
    margins = edit.contentsMargins()
    frame = margins.top() + margins.bottom() + 2 * round(edit.document().documentMargin())
    edit.setFixedHeight(visible * edit.fontMetrics().lineSpacing() + frame)
