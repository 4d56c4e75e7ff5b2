"""What the conversation sidebar asks of the window: open, rename, pin, export and delete a
conversation (with Undo until the app closes), search the conversations and jump to a hit, and
the sidebar's own showing and hiding (by the person, or folded away in a narrow window).

It also keeps the list in step with the store when the controller says conversations changed,
and the list and the open chat when an operation (an import, its undo) announces what it changed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Slot

from app.operations.changes import Changes, app_changes
from app.store.conversations import StoreError
from ui.text.plain_text import menu_text
from ui.window.conversation_views import conversation_rows, project_rows, search_hits
from ui.window.window_host import ConversationList

if TYPE_CHECKING:
    from ui.sidebar.sidebar import Sidebar
    from ui.window.actions import WindowActions
    from ui.window.conversation_files import ConversationFiles


class SidebarHost(ConversationList, Protocol):
    """The window as the sidebar's commands use it."""

    sidebar: Sidebar
    menu_actions: WindowActions
    files: ConversationFiles


class SidebarCommands(QObject):
    def __init__(self, window: SidebarHost) -> None:
        super().__init__(window.window())
        self._window = window
        self._controller = window.controller
        self._store = window.store
        self._sidebar = window.sidebar
        self._undo: Callable[[], None] | None = None  # what Undo does now
        self._narrow = False  # the window is narrow: the sidebar folds away by itself
        self._folded_by_width = False
        s = self._sidebar
        s.newRequested.connect(window.new_chat)
        s.conversationActivated.connect(self._on_activated)
        s.renameRequested.connect(self._on_rename)
        s.pinRequested.connect(self._on_pin)
        s.exportRequested.connect(self._on_export)
        s.deleteRequested.connect(self._on_delete_confirmed)
        s.searchRequested.connect(self.search)
        s.searchHitActivated.connect(self._on_search_hit)
        self._controller.conversationsChanged.connect(self.refresh)
        app_changes().subscribe(self, self._on_changes)

    @Slot()
    def refresh(self) -> None:
        """List the store's conversations again (and the search hits, and the open chat's
        title, which a rename may have changed)."""
        window = self._window
        try:
            conversations = self._store.list_conversations()
        except StoreError as exc:
            window.show_notice(str(exc))
            return
        cid = window.current_conversation_id
        try:
            projects = self._store.list_projects()
        except StoreError as exc:
            window.show_notice(str(exc))
            projects = []
        rows = conversation_rows(conversations)
        self._sidebar.set_conversations(rows, project_rows(projects, conversations))
        self._sidebar.set_current(None if cid is None else str(cid))
        # Search results on show must not list a chat just deleted, or miss one restored.
        query = self._sidebar.search_box.text().strip()
        if query:
            self.search(query)
        current = next((c for c in conversations if c.id == cid), None)
        if current is not None:
            window.show_conversation_title(current)

    def _on_changes(self, changes: Changes) -> None:
        """List the conversations again; the open one, if it changed, is shown anew, or, gone
        (an undone import took it), replaced by the newest one left."""
        if changes.conversation_list or changes.conversations:
            self.refresh()
        cid = self._window.current_conversation_id
        if cid is None or cid not in changes.conversations:
            return
        try:
            self._store.get_conversation(cid)
        except StoreError:
            self._window.close_conversation()
            self._open_newest()
            return
        self._window.open_conversation(cid)

    def _open_newest(self) -> None:
        """After the open chat went away: the newest one left, or a new one."""
        remaining = self._store.list_conversations()
        if remaining:
            self._window.open_conversation(remaining[0].id)
        else:
            self._window.new_chat()

    @Slot(str)
    def _on_activated(self, conversation_id: str) -> None:
        self._window.open_conversation(int(conversation_id))

    @Slot(str, str)
    def _on_rename(self, conversation_id: str, title: str) -> None:
        self._controller.rename_conversation(int(conversation_id), title)

    @Slot(str, bool)
    def _on_pin(self, conversation_id: str, pinned: bool) -> None:
        self._controller.set_pinned(int(conversation_id), pinned)

    @Slot(str)
    def _on_export(self, conversation_id: str) -> None:
        self._window.open_conversation(int(conversation_id))  # export takes the chat on screen
        self._window.files.ask_export()

    @Slot(str)
    def _on_delete_confirmed(self, conversation_id: str) -> None:
        self.delete_conversation(int(conversation_id))

    def delete_conversation(self, conversation_id: int) -> None:
        """Delete at once (the sidebar asked first) and offer Undo until the app closes."""
        window = self._window
        try:
            title = self._store.get_conversation(conversation_id).title
        except StoreError as exc:
            window.show_notice(str(exc))
            return
        self._controller.delete_conversation(conversation_id)
        self.offer_undo(
            f"Delete “{menu_text(title)}”",
            f"Deleted “{title}”.",
            partial(self._restore_conversation, conversation_id),
        )
        if conversation_id == window.current_conversation_id:
            window.close_conversation()
            self._open_newest()

    def offer_undo(self, what: str, said: str, undo: Callable[[], None]) -> None:
        """Edit › Undo `what` (menu text) and the banner's Undo after `said` both call `undo`,
        once, until something else is deleted (a chat, a project)."""
        self._undo = undo
        self._window.menu_actions.undo.setEnabled(True)
        self._window.menu_actions.undo.setText(f"&Undo {what}")
        self._window.banner.show_notice(said, "Undo", self.undo_delete)

    @Slot()
    def undo_delete(self) -> None:
        undo, self._undo = self._undo, None
        if undo is None:
            return
        window = self._window
        window.menu_actions.undo.setEnabled(False)
        window.menu_actions.undo.setText("&Undo")
        window.banner.dismiss()
        undo()

    def _restore_conversation(self, conversation_id: int) -> None:
        self._controller.restore_conversation(conversation_id)
        self.reopen(conversation_id)

    def reopen(self, conversation_id: int) -> None:
        """Show a chat brought back by an undo, in place of the empty one made meanwhile."""
        window = self._window
        empty = window.current_conversation_id
        if empty is not None and empty != conversation_id and window.is_empty(empty):
            # The empty chat made to replace the deleted one is not worth keeping.
            window.close_conversation()
            self._controller.delete_conversation(empty)
        window.open_conversation(conversation_id)

    @Slot(str)
    def search(self, query: str) -> None:
        project = self._sidebar.search_project()
        try:
            hits = self._store.search(query, project_id=int(project) if project else None)
        except StoreError as exc:
            self._window.show_notice(str(exc))
            return
        self._sidebar.set_search_results(search_hits(hits))

    @Slot(str, str)
    def _on_search_hit(self, conversation_id: str, message_id: str) -> None:
        self.jump_to(int(conversation_id), int(message_id) if message_id else None)

    def jump_to(self, conversation_id: int, message_id: int | None) -> None:
        """Open the conversation on the branch that holds the message, scrolled to it."""
        window = self._window
        if message_id is not None and not self._controller.switch_to_message(message_id):
            return
        window.open_conversation(conversation_id)
        if message_id is not None and window.current_conversation_id == conversation_id:
            window.chat_view.scroll_to_message(str(message_id))

    @Slot()
    def focus_search(self) -> None:
        if not self._sidebar.isVisible():
            self.toggle()
        self._sidebar.search_box.setFocus()
        self._sidebar.search_box.selectAll()

    @Slot()
    def toggle(self) -> None:
        """Show or hide the sidebar, as the person asks."""
        self._folded_by_width = False  # the person's choice stands until the next fold
        self._show(self._sidebar.isHidden())

    def _show(self, shown: bool) -> None:
        self._sidebar.setVisible(shown)
        self._window.menu_actions.toggle_sidebar.setChecked(shown)

    def follow_width(self, narrow: bool) -> None:
        """A narrow window gives the chat the room; widened again, the sidebar comes back if it
        was folded for the width (not if the person hid it)."""
        if narrow == self._narrow:
            return
        self._narrow = narrow
        if narrow and not self._sidebar.isHidden():
            self._folded_by_width = True
            self._show(False)
        elif not narrow and self._folded_by_width:
            self._folded_by_width = False
            self._show(True)
