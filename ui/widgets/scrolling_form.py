"""A long form in a dialog: scrolled when the screen is too short for it, and the dialog's first
size its whole form where the screen has room. Without this Qt gives a new dialog at most two
thirds of the screen and squeezes a form's wrapped hints into the rows below them (the chat's
settings need about 900 pixels; a 1080p screen's two thirds is 720)."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QDialog, QFormLayout, QFrame, QScrollArea, QVBoxLayout, QWidget

from ui.widgets.theme import em

_SCREEN_SHARE = 0.9  # of the screen's free height a dialog opens at, at most


class _FormScroller(QScrollArea):
    """Scrolls only vertically, so it is never narrower than its form can be (a narrower form
    would be cut at the right)."""

    def minimumSizeHint(self) -> QSize:
        content = self.widget()
        least = super().minimumSizeHint()
        if content is None:
            return least
        bar = self.verticalScrollBar().sizeHint().width()
        frame = 2 * self.frameWidth()
        return QSize(content.minimumSizeHint().width() + bar + frame, least.height())


def scrolling_form(form: QFormLayout, parent: QWidget) -> QScrollArea:
    """`form` in a frameless scroll area that scrolls only vertically."""
    content = QWidget()
    content.setObjectName("ScrollingFormContent")
    column = QVBoxLayout(content)
    # The labels line up with what is above the form; a little room before the scroll bar.
    column.setContentsMargins(0, 0, em(content, 0.5), 0)
    column.addLayout(form)
    column.addStretch(1)  # a screen with room to spare leaves it below the form, not between rows
    area = _FormScroller(parent)
    area.setObjectName("ScrollingForm")
    area.setWidget(content)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return area


def open_at_full_height(dialog: QDialog, area: QScrollArea) -> None:
    """Size `dialog` so its form shows whole when the screen has room, else as tall as the
    screen allows (the form then scrolls); wide enough for the form and a scroll bar."""
    content = area.widget()
    if content is None:
        return
    layout = dialog.layout()
    margins = layout.contentsMargins() if layout is not None else dialog.contentsMargins()
    sides = margins.left() + margins.right()
    bar = area.verticalScrollBar().sizeHint().width()
    width = max(
        dialog.minimumWidth(), dialog.sizeHint().width(), content.sizeHint().width() + bar + sides
    )
    inner = width - bar - sides
    needed = content.heightForWidth(inner) if content.hasHeightForWidth() else -1
    form = needed if needed > 0 else content.sizeHint().height()
    height = dialog.sizeHint().height() - area.sizeHint().height() + form
    screen = dialog.screen()
    if screen is not None:
        height = min(height, int(screen.availableGeometry().height() * _SCREEN_SHARE))
    dialog.resize(width, height)
