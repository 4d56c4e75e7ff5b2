"""The heading that folds and unfolds a section (a reply's reasoning, a tool's result): a flat
checkable button whose arrow points right when folded and down when open."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolButton, QWidget

from ui.widgets.theme import scale_font


def fold_toggle(parent: QWidget, object_name: str, font_scale: float) -> QToolButton:
    toggle = QToolButton(parent)
    toggle.setObjectName(object_name)
    toggle.setProperty("fold", True)  # one style for every fold heading (theme.qss)
    toggle.setCheckable(True)
    toggle.setAutoRaise(True)
    toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    toggle.setCursor(Qt.CursorShape.PointingHandCursor)
    scale_font(toggle, font_scale)
    return toggle


def show_fold(toggle: QToolButton, expanded: bool, what: str) -> None:
    """Show the heading open or folded; its tooltip offers the other ("Hide the reasoning")."""
    toggle.setChecked(expanded)
    toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
    toggle.setToolTip(f"Hide {what}" if expanded else f"Show {what}")
