"""The flat icon buttons of the window's header and of each message's toolbar."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolButton

from ui.widgets.icons import themed_icon


def icon_button(icon: str, name: str, tip: str, object_name: str) -> QToolButton:
    """A raised-on-hover button showing `icon`, named `name` for screen readers."""
    button = QToolButton()
    button.setObjectName(object_name)
    button.setIcon(themed_icon(icon))
    button.setAutoRaise(True)
    button.setToolTip(tip)
    button.setAccessibleName(name)
    button.setCursor(Qt.CursorShape.PointingHandCursor)
    return button


def message_action(icon: str, name: str, shortcut_hint: str = "") -> QToolButton:
    """A button of a message's toolbar; its tooltip names the key that does the same."""
    tip = f"{name} ({shortcut_hint})" if shortcut_hint else name
    button = icon_button(icon, name, tip, "MessageAction")
    # Tab reaches it, a click does not take the focus from the text being read.
    button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
    return button
