"""Projects in the window: what the sidebar asks of them (a new project, its settings, a chat in
it, folding its group, moving chats in and out, deleting it with or without its chats and the
undo), and the open chat's project under its title: its name, and a note when its instructions
changed since the chat's last reply (the next turn reads the new ones: a changed prefix).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Qt, Slot

from app.chat.tools.choice import server_label
from app.store.conversations import StoreError
from app.store.project_records import ProjectDeletion, ProjectFields
from ui.dialogs.delete_confirmation import ProjectDeletion as Choice
from ui.dialogs.delete_confirmation import project_deletion
from ui.text.plain_text import menu_text
from ui.window.window_host import ChatWindow

if TYPE_CHECKING:
    from ui.chat.chat_header import ChatHeader
    from ui.dialogs.project_settings import ProjectSettingsDialog
    from ui.sidebar.sidebar import Sidebar
    from ui.window.models import WindowModels
    from ui.window.sidebar_commands import SidebarCommands
    from ui.window.token_counter import TokenCounter


class ProjectHost(ChatWindow, Protocol):
    """The window as the project commands use it."""

    sidebar: Sidebar
    sidebar_commands: SidebarCommands
    header: ChatHeader
    models: WindowModels
    token_counter: TokenCounter

    def is_empty(self, conversation_id: int) -> bool: ...

    def close_conversation(self) -> None: ...


class ProjectCommands(QObject):
    def __init__(self, window: ProjectHost) -> None:
        super().__init__(window.window())
        self._window = window
        self._projects = window.controller.projects
        s = window.sidebar
        s.newProjectRequested.connect(self.new_project)
        s.projectToggled.connect(self._on_toggled)
        s.projectChatRequested.connect(self._on_new_chat)
        s.projectSettingsRequested.connect(self._on_settings)
        s.projectDeleteRequested.connect(self._on_delete)
        s.moveRequested.connect(self._on_move)
        window.controller.conversationOpened.connect(self.show_project)
        window.controller.conversationChanged.connect(self._on_changed)

    # -- the sidebar's requests -----------------------------------------------------------------

    @Slot(str)
    def new_project(self, conversation_id: str = "") -> ProjectSettingsDialog:
        """Ask for the new project's settings; once made, `conversation_id` (if any) moves in."""
        dialog = self._dialog(ProjectFields(""), new=True)

        def create() -> None:
            project = self._projects.create(dialog.fields())
            if project is not None and conversation_id:
                self._projects.move(int(conversation_id), project.id)

        dialog.accepted.connect(create)
        dialog.open()
        return dialog

    def open_settings(self, project_id: int) -> ProjectSettingsDialog | None:
        try:
            project = self._window.store.get_project(project_id)
        except StoreError as exc:
            self._window.show_notice(str(exc))
            return None
        dialog = self._dialog(project)
        dialog.accepted.connect(lambda: self._update(project_id, dialog))
        dialog.open()
        return dialog

    def _update(self, project_id: int, dialog: ProjectSettingsDialog) -> None:
        self._projects.update(project_id, dialog.fields())
        self._window.token_counter.schedule()  # the instructions are part of the prompt

    def new_chat_in(self, project_id: int) -> None:
        """A chat in the project, opened; an empty chat open now is not kept (nothing in it)."""
        window = self._window
        empty = window.current_conversation_id
        chat = self._projects.new_chat(project_id)
        if empty is not None and window.is_empty(empty):
            window.close_conversation()
            window.controller.delete_conversation(empty)
        window.open_conversation(chat)

    def delete_project(self, project_id: int) -> None:
        """Ask keep-chats or delete-them, then delete, offering Undo."""
        window = self._window
        try:
            project = window.store.get_project(project_id)
            chats = len(window.store.project_chat_ids(project_id))
        except StoreError as exc:
            window.show_notice(str(exc))
            return
        choice = project_deletion(window.window(), project.name, chats)
        if choice is Choice.CANCEL:
            return
        deletion = self._projects.delete(project_id, choice is Choice.DELETE_CHATS)
        if deletion is None:
            return
        said = f"Deleted the project “{project.name}”" + (
            f" and its {chats} chats." if deletion.chats_deleted and chats else "."
        )
        window.sidebar_commands.offer_undo(
            f"Delete Project “{menu_text(project.name)}”", said, lambda: self._restore(deletion)
        )
        current = window.current_conversation_id
        if deletion.chats_deleted and current in deletion.chat_ids:
            window.close_conversation()
            window.new_chat()

    def _restore(self, deletion: ProjectDeletion) -> None:
        self._projects.restore(deletion)
        if deletion.chats_deleted and deletion.chat_ids:
            self._window.sidebar_commands.reopen(deletion.chat_ids[0])

    @Slot(str, bool)
    def _on_toggled(self, project_id: str, collapsed: bool) -> None:
        self._projects.set_collapsed(int(project_id), collapsed)

    @Slot(str)
    def _on_new_chat(self, project_id: str) -> None:
        self.new_chat_in(int(project_id))

    @Slot(str)
    def _on_settings(self, project_id: str) -> None:
        self.open_settings(int(project_id))

    @Slot(str)
    def _on_delete(self, project_id: str) -> None:
        self.delete_project(int(project_id))

    @Slot(str, str)
    def _on_move(self, conversation_id: str, project_id: str) -> None:
        self._projects.move(int(conversation_id), int(project_id) if project_id else None)
        if int(conversation_id) == self._window.current_conversation_id:
            self._window.token_counter.schedule()  # another project, other instructions

    # -- the open chat's project ----------------------------------------------------------------

    @Slot(int)
    def show_project(self, conversation_id: int) -> None:
        """Under the title: the chat's project, and whether its instructions changed since the
        chat's last reply."""
        store = self._window.store
        project = self._projects.project_of(conversation_id)
        if project is None:
            self._window.header.set_project("", "")
            return
        note = ""
        try:
            path = store.active_path(conversation_id)
        except StoreError:
            path = []
        replies = [m for m in path if m.role == "assistant" and m.provenance.get("instructions")]
        if replies:
            asked = replies[-1].provenance["instructions"].get("version")
            if asked != project.instructions_version:
                note = "instructions changed since the last reply: the next one reads the new"
        self._window.header.set_project(project.name, note)

    @Slot(int)
    def _on_changed(self, conversation_id: int) -> None:
        if conversation_id == self._window.current_conversation_id:
            self.show_project(conversation_id)

    def _dialog(self, fields: ProjectFields, new: bool = False) -> ProjectSettingsDialog:
        from ui.dialogs.project_settings import ProjectSettingsDialog  # imported when first used

        window = self._window
        session = window.controller.tool_session
        names = [session.builtin_info().name, *(i.name for i in session.server_infos())]
        dialog = ProjectSettingsDialog(
            fields,
            window.models.library(),
            window.controller.presets.presets(),
            [(name, server_label(name)) for name in names],
            window.window(),
            new=new,
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        return dialog
