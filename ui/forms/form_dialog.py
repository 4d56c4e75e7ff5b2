"""A settings dialog's layout, one for each of them: a line saying what the dialog sets, its form
(scrolled where the screen is too short for it, `ui.widgets.scrolling_form`), then what goes
below (an error line, the buttons), opened as tall as the form where the screen has room."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QFormLayout, QVBoxLayout, QWidget

from ui.text.plain_text import plain_label
from ui.widgets.scrolling_form import open_at_full_height, scrolling_form
from ui.widgets.theme import em


def lay_out_form_dialog(
    dialog: QDialog, intro: str, form: QFormLayout, below: tuple[QWidget, ...], width_em: float
) -> None:
    """Lay `dialog` out as the module says, at least `width_em` wide."""
    line = plain_label(intro)
    line.setObjectName("SettingsIntro")
    line.setWordWrap(True)
    layout = QVBoxLayout(dialog)
    layout.addWidget(line)
    scroller = scrolling_form(form, dialog)
    layout.addWidget(scroller, 1)
    for widget in below:
        layout.addWidget(widget)
    dialog.setMinimumWidth(em(dialog, width_em))
    open_at_full_height(dialog, scroller)
