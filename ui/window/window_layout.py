"""How the main window is laid out: the conversation sidebar beside the chat pane (header, notice
banner, messages, and the composer centred under them) in a splitter, the window's first size,
and its geometry and splitter sizes kept between runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QMainWindow, QSplitter, QVBoxLayout, QWidget

from ui.widgets.theme import em

if TYPE_CHECKING:
    from app.settings import Preferences

# The composer is no wider than the message column above it.
_COLUMN_EM = 48


def chat_splitter(
    window: QWidget,
    sidebar: QWidget,
    header: QWidget,
    banner: QWidget,
    chat_view: QWidget,
    composer: QWidget,
) -> QSplitter:
    """The sidebar and the chat pane side by side; sizes in em of `window`'s font."""
    composer.setMaximumWidth(em(composer, _COLUMN_EM))
    composer_row = QHBoxLayout()
    composer_row.setContentsMargins(em(window, 1), 0, em(window, 1), em(window, 0.6))
    composer_row.addStretch(1)
    composer_row.addWidget(composer, 100)
    composer_row.addStretch(1)

    pane = QWidget()
    pane.setObjectName("ChatPane")
    column = QVBoxLayout(pane)
    column.setContentsMargins(0, 0, 0, 0)
    column.setSpacing(0)
    column.addWidget(header)
    column.addWidget(banner)
    column.addWidget(chat_view, 1)
    column.addLayout(composer_row)

    splitter = QSplitter(Qt.Orientation.Horizontal)
    splitter.setObjectName("MainSplitter")
    splitter.setAccessibleName("Sidebar and chat")
    splitter.setChildrenCollapsible(False)
    splitter.setHandleWidth(1)
    splitter.addWidget(sidebar)
    splitter.addWidget(pane)
    splitter.setStretchFactor(0, 0)
    splitter.setStretchFactor(1, 1)
    splitter.setSizes([em(window, 14), em(window, 38)])
    return splitter


def set_first_size(window: QWidget) -> None:
    """A comfortable first size, never larger than the screen (the saved geometry may then
    put back the person's own)."""
    width, height = em(window, 78), em(window, 54)
    screen = window.screen()
    if screen is not None:
        available = screen.availableGeometry()
        width = min(width, int(available.width() * 0.9))
        height = min(height, int(available.height() * 0.9))
    window.resize(width, height)


def restore_geometry(window: QMainWindow, splitter: QSplitter, preferences: Preferences) -> None:
    """Put back the window's geometry and the splitter's sizes from last time, when saved."""
    geometry = preferences.window_state("geometry")
    if geometry is not None:
        window.restoreGeometry(geometry)
    sizes = preferences.window_state("splitter")
    if sizes is not None:
        splitter.restoreState(sizes)


def save_geometry(window: QMainWindow, splitter: QSplitter, preferences: Preferences) -> None:
    """Keep the window's geometry and the splitter's sizes for next time."""
    preferences.set_window_state("geometry", window.saveGeometry())
    preferences.set_window_state("splitter", splitter.saveState())
