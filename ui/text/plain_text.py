"""Showing text a person or a model wrote exactly as written.

Qt guesses: a QLabel, a tooltip or a message box whose text looks like HTML renders it, so a
conversation titled `<font size=6>…</font><a href=…>` would show huge text and a live link. A
menu or button turns `&` into a keyboard shortcut. Every title, message, file name, model name
and error goes through one of these helpers before it reaches such a widget.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget


def plain_label(text: str = "", parent: QWidget | None = None) -> QLabel:
    """A label that never interprets its text as HTML."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    return label


def literal(text: str) -> str:
    """`text` for a place that guesses whether text is HTML (a tooltip, a message box's details,
    an item view's tooltip role): shown literally, line breaks kept."""
    if "<" not in text:
        return text  # Qt only takes text with a tag for HTML
    escaped = html.escape(text, quote=False).replace("\n", "<br>")
    return f"<p style='white-space:pre-wrap'>{escaped}</p>"


def menu_text(text: str) -> str:
    """`text` for a menu item or button, where a single `&` marks the shortcut key."""
    return text.replace("&", "&&")


def message_box(
    parent: QWidget | None,
    icon: QMessageBox.Icon,
    title: str,
    text: str,
    details: str = "",
) -> QMessageBox:
    """A message box (not yet shown) whose text and details are shown literally."""
    box = QMessageBox(parent)
    box.setIcon(icon)
    box.setWindowTitle(title)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(text)
    if details:
        box.setInformativeText(literal(details))
    return box


def show_message(parent: QWidget | None, icon: QMessageBox.Icon, title: str, text: str) -> None:
    """Show `text` (an error, say) in a modal message box, literally."""
    box = message_box(parent, icon, title, text)
    box.exec()
