"""The question asked before something is deleted."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget


def delete_confirmed(
    parent: QWidget, object_name: str, title: str, question: str, details: str, what: str
) -> bool:
    """Whether the person chose Delete; Cancel is the default, so Enter deletes nothing.

    `what` names the Delete button for screen readers, e.g. "Delete message".
    """
    box = QMessageBox(parent)
    box.setObjectName(object_name)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle(title)
    box.setText(question)
    box.setInformativeText(details)
    delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
    delete.setAccessibleName(what)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    return box.clickedButton() is delete
