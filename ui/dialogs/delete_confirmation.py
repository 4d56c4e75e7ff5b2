"""The questions asked before something is deleted: a chat or a message, and a project (with
its chats, or keeping them)."""

from __future__ import annotations

from enum import Enum

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


class ProjectDeletion(Enum):
    """What the person chose when asked before a project is deleted."""

    CANCEL = "cancel"
    KEEP_CHATS = "keep"  # the chats move out of the project
    DELETE_CHATS = "delete"


def project_deletion(parent: QWidget, name: str, chats: int) -> ProjectDeletion:
    """Ask whether a project's chats stay (moved out) or go with it; Cancel is the default.
    Either way it can be undone right after."""
    box = message_box(
        parent,
        QMessageBox.Icon.Warning,
        "Delete project",
        f"Delete the project “{name}”?",
        f"It holds {chats} chat{'' if chats == 1 else 's'}. Keep them (they move out of the "
        "project, under your other chats) or delete them with it. You can undo right after.",
    )
    box.setObjectName("ConfirmDeleteProject")
    keep = box.addButton("Keep chats", QMessageBox.ButtonRole.AcceptRole)
    keep.setAccessibleName("Delete project, keep its chats")
    delete = box.addButton("Delete chats too", QMessageBox.ButtonRole.DestructiveRole)
    delete.setAccessibleName("Delete project and its chats")
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    clicked = box.clickedButton()
    if clicked is keep:
        return ProjectDeletion.KEEP_CHATS
    return ProjectDeletion.DELETE_CHATS if clicked is delete else ProjectDeletion.CANCEL
