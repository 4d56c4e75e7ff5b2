"""The person's actions on projects, for the chat controller: make one, change its settings,
fold its group, start a chat in it, move chats in and out, delete it keeping its chats (moved
out) or with them, and undo that.

A project's instructions come first in the system prompt of each of its chats
(`Store.system_prompt_for`): changing them or moving a chat changes what the next turn reads,
never a reply already written. Like the controller's other parts it knows no controller: it is
given the store and the conversation actions (a new chat, a deleted chat's caches) and says what
changed by its own signals.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from app.chat.conversation_actions import ConversationActions
from app.chat.store_guard import guarded
from app.store.conversations import Store
from app.store.project_records import Project, ProjectDeletion, ProjectFields


class ProjectActions(QObject):
    notice = Signal(str)
    conversationsChanged = Signal()  # the sidebar's groups or chats changed
    conversationChanged = Signal(int)  # what this chat's next turn reads changed

    def __init__(
        self, store: Store, conversations: ConversationActions, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._store = store
        self._conversations = conversations

    def projects(self) -> list[Project]:
        return self._guard(self._store.list_projects) or []

    def project_of(self, conversation_id: int) -> Project | None:
        """The project the chat belongs to, or None."""
        chat = self._guard(lambda: self._store.get_conversation(conversation_id))
        if chat is None or chat.project_id is None:
            return None
        project_id = chat.project_id
        return self._guard(lambda: self._store.get_project(project_id))

    def create(self, fields: ProjectFields) -> Project | None:
        project = self._guard(lambda: self._store.create_project(fields))
        if project is not None:
            self.conversationsChanged.emit()
        return project

    def update(self, project_id: int, fields: ProjectFields) -> Project | None:
        """New settings; new instructions reach each chat's next turn."""
        project = self._guard(lambda: self._store.update_project(project_id, fields))
        if project is not None:
            self.conversationsChanged.emit()
            for chat_id in self._guard(lambda: self._store.project_chat_ids(project_id)) or ():
                self.conversationChanged.emit(chat_id)
        return project

    def set_collapsed(self, project_id: int, collapsed: bool) -> None:
        self._guard(lambda: self._store.set_project_collapsed(project_id, collapsed))

    def new_chat(self, project_id: int) -> int:
        """A chat made in the project, with its model, preset and tools."""
        return self._conversations.new_conversation(project_id)

    def move(self, conversation_id: int, project_id: int | None) -> bool:
        """Into a project, or out of any (None); False when the store refused (said why)."""
        self._guard(lambda: self._store.move_to_project(conversation_id, project_id))
        self.conversationsChanged.emit()
        self.conversationChanged.emit(conversation_id)
        return self._in(conversation_id, project_id)

    def delete(self, project_id: int, delete_chats: bool) -> ProjectDeletion | None:
        """Delete it softly; its chats are moved out, or deleted with it. `restore` undoes."""
        deletion = self._guard(lambda: self._store.delete_project(project_id, delete_chats))
        if deletion is not None and delete_chats:
            for chat_id in deletion.chat_ids:
                self._conversations.stop_and_forget(chat_id)
        self.conversationsChanged.emit()
        return deletion

    def restore(self, deletion: ProjectDeletion) -> None:
        self._guard(lambda: self._store.restore_project(deletion))
        self.conversationsChanged.emit()
        for chat_id in deletion.chat_ids:
            self.conversationChanged.emit(chat_id)

    def _in(self, conversation_id: int, project_id: int | None) -> bool:
        chat = self._guard(lambda: self._store.get_conversation(conversation_id))
        return chat is not None and chat.project_id == project_id

    def _guard[T](self, action: Callable[[], T]) -> T | None:
        return guarded(self.notice, action)
