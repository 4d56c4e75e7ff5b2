"""The question asked before something is deleted."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

from ui.text.plain_text import message_box


def delete_confirmed(
    parent: QWidget, object_name: str, title: str, question: str, details: str, what: str
) -> bool:
    """Whether the person chose Delete; Cancel is the default, so Enter deletes nothing.

    `what` names the Delete button for screen readers, e.g. "Delete message".
    """
    box = message_box(parent, QMessageBox.Icon.Warning, title, question, details)
    box.setObjectName(object_name)
    delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
    delete.setAccessibleName(what)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    return box.clickedButton() is delete
