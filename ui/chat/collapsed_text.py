"""A long message of the person's shown folded to its first lines, with a "Show more" button
under it that shows the rest (and "Show less" to fold it again)."""

from __future__ import annotations

from PySide6.QtWidgets import QToolButton, QWidget

from ui.text.safe_browser import SafeBrowser
from ui.widgets.visibility import set_shown

# A longer message of the person's shows this many lines until "Show more".
COLLAPSED_LINES = 12


def show_more_button(parent: QWidget) -> QToolButton:
    button = QToolButton(parent)
    button.setObjectName("ShowMoreButton")
    button.setAutoRaise(True)
    return button


def show_collapsed(body: SafeBrowser, button: QToolButton, collapsed: bool) -> None:
    """Fold `body` to its first lines (`collapsed`) when it is longer, else show it whole; the
    button shows only for a long message and offers the other."""
    limit = body.fontMetrics().lineSpacing() * COLLAPSED_LINES
    long = body.document().size().height() > limit
    body.set_height_limit(limit if collapsed and long else None)
    set_shown(button, long)
    button.setText("Show more" if collapsed else "Show less")
    button.setAccessibleName(button.text())
    button.setToolTip("Show the whole message" if collapsed else "Show only its first lines")
