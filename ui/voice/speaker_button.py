"""A reply's speaker button: click to read the reply aloud, click again to pause or go on; its
menu stops the reading and sets the speed (also Preferences › Voice's)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu, QToolButton

from ui.voice.read_aloud import Reading
from ui.widgets.icons import ColorRole, themed_icon

SPEEDS = (0.75, 1.0, 1.25, 1.5, 2.0)


def speed_label(speed: float) -> str:
    return f"{speed:g}×"


def fit_speaker(
    button: QToolButton,
    stop: Callable[[], None],
    set_speed: Callable[[float], None],
    speed: Callable[[], float],
) -> None:
    """Give a reply's speaker button its menu: Stop, then the speeds (the current one checked
    when the menu opens)."""
    menu = QMenu(button)
    menu.setObjectName("SpeakerMenu")
    stop_action = menu.addAction("Stop Reading")
    stop_action.triggered.connect(stop)
    menu.addSection("Speed")
    group = QActionGroup(menu)
    actions: list[tuple[float, QAction]] = []
    for value in SPEEDS:
        action = menu.addAction(speed_label(value))
        action.setCheckable(True)
        group.addAction(action)
        action.triggered.connect(lambda _=False, v=value: set_speed(v))
        actions.append((value, action))

    def check_current() -> None:
        for value, action in actions:
            action.setChecked(abs(value - speed()) < 1e-6)

    menu.aboutToShow.connect(check_current)
    button.setMenu(menu)
    button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)


def show_reading(button: QToolButton, state: Reading) -> None:
    """The button as the reading of its reply stands."""
    if state in (Reading.SPEAKING, Reading.PREPARING):
        icon, tip = themed_icon("pause", ColorRole.Highlight, ColorRole.Highlight), "Pause reading"
    elif state is Reading.PAUSED:
        icon, tip = themed_icon("play", ColorRole.Highlight, ColorRole.Highlight), "Go on reading"
    else:
        icon, tip = themed_icon("volume"), "Read aloud"
    button.setIcon(icon)
    button.setToolTip(tip)
    button.setAccessibleName(tip)
