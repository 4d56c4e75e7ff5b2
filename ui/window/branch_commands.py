"""The commands that make a new branch or change which one shows: regenerate a reply, edit a
message, step between versions, continue a branch in a new chat, delete a message (after asking,
since a deleted branch cannot be brought back).

They come from a message's own buttons (a message id), from the Chat menu (the last message
of the branch on screen, or the message that has the focus), or from the notice that a
conversation filled the model's context (continue it in a new chat).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QApplication

from app.images.store import is_image_record
from app.store.conversations import Message, StoreError
from ui.chat.draft_attachments import image_record
from ui.chat.message_widget import MessageWidget
from ui.dialogs.delete_confirmation import delete_confirmed
from ui.widgets.view_models import ImageView, MessageView
from ui.window.conversation_views import message_views

if TYPE_CHECKING:
    from app.generation.reply_events import ContextFull
    from ui.window.window_host import ChatPane


class BranchCommands(QObject):
    def __init__(self, window: ChatPane) -> None:
        super().__init__(window.window())
        self._window = window
        self._controller = window.controller
        self._store = window.store
        self._chat_view = window.chat_view

    def path_views(self) -> list[MessageView]:
        """The branch on screen, without sibling positions; empty if it cannot be read."""
        cid = self._window.current_conversation_id
        if cid is None:
            return []
        try:
            return message_views(self._store.active_path(cid), [], self._store.images)
        except StoreError:
            return []

    # -- from a message's buttons -----------------------------------------------------------

    @Slot(str, str, list)
    def edit(self, message_id: str, text: str, images: list[ImageView]) -> None:
        """A new version of the message with `text` and `images` (its files kept as they
        were)."""
        try:
            files = [
                item
                for item in self._store.get_message(int(message_id)).attachments
                if not is_image_record(item)
            ]
        except StoreError as exc:
            self._window.show_notice(str(exc))
            return
        attachments = [image_record(image) for image in images] + files
        if not self._controller.edit(int(message_id), text, attachments):
            widget = self._chat_view.message_widget(message_id)
            if widget is not None:  # reopen the editor as it was, so nothing is lost
                widget.start_editing(text, images)

    @Slot(str)
    def regenerate(self, message_id: str) -> None:
        self._controller.regenerate(int(message_id))

    @Slot(str)
    def continue_reply(self, message_id: str) -> None:
        self._controller.continue_reply(int(message_id))

    @Slot(str, int)
    def switch_sibling(self, message_id: str, delta: int) -> None:
        self._controller.switch_sibling(int(message_id), delta)

    @Slot(str)
    def delete_message(self, message_id: str) -> None:
        """Ask first: unlike a conversation, a deleted branch cannot be brought back."""
        try:
            message = self._store.get_message(int(message_id))
            below = _descendants(self._store.all_messages(message.conversation_id), message.id)
        except StoreError as exc:
            self._window.show_notice(str(exc))
            return
        noun = "message" if below == 1 else "messages"
        replies = f"The {below} {noun} below it in this branch go too. " if below else ""
        if delete_confirmed(
            self._window.window(),
            "ConfirmDeleteMessage",
            "Delete message",
            "Delete this message?",
            f"{replies}This cannot be undone.",
            "Delete message",
        ):
            self._controller.delete_message(message.id)

    # -- from the Chat menu -----------------------------------------------------------------

    @Slot()
    def regenerate_last(self) -> None:
        replies = [v for v in self.path_views() if v.role == "assistant"]
        if replies:
            self._controller.regenerate(int(replies[-1].id))
        else:
            self._window.show_notice("There is no reply to regenerate yet.")

    @Slot()
    def fork_branch(self) -> None:
        """Copy the branch on screen into a new conversation and open it there."""
        path = self.path_views()
        if not path:
            self._window.show_notice("There is nothing to continue yet.")
            return
        source = self._window.current_conversation_id
        new_id = self._controller.fork_conversation(int(path[-1].id))
        if new_id is None:
            return
        self._window.open_conversation(new_id)
        if source is not None:
            count = len(path)
            self._window.banner.show_notice(
                f"Copied this branch ({count} message{'s' if count != 1 else ''}) into a new "
                "chat; the original is unchanged.",
                "Back to the original",
                lambda: self._window.open_conversation(source),
            )

    @Slot()
    def edit_last(self) -> None:
        mine = [v for v in self.path_views() if v.role == "user"]
        if not mine:
            self._window.show_notice("There is no message of yours to edit yet.")
            return
        self._chat_view.scroll_to_message(mine[-1].id)
        widget = self._chat_view.message_widget(mine[-1].id)
        if widget is not None:
            widget.start_editing()

    def step_branch(self, delta: int) -> None:
        """Previous/next version of the message that has the focus, else of the last message
        on the path that has versions."""
        focused = QApplication.focusWidget()
        while focused is not None and not isinstance(focused, MessageWidget):
            focused = focused.parentWidget()
        if focused is not None and focused.view.sibling_count > 1:
            self._controller.switch_sibling(int(focused.view.id), delta)
            return
        cid = self._window.current_conversation_id
        if cid is None:
            return
        views = message_views(
            self._store.active_path(cid), self._store.all_messages(cid), self._store.images
        )
        branched = [v for v in views if v.sibling_count > 1]
        if branched:
            self._controller.switch_sibling(int(branched[-1].id), delta)
        else:
            self._window.statusBar().showMessage("This conversation has no other versions.", 3000)

    # -- when the context is full -----------------------------------------------------------

    @Slot(object)
    def offer_new_chat(self, full: ContextFull) -> None:
        """Say the conversation filled the model's context, offering to continue in a new chat."""
        conversation_id = full.conversation_id
        self._window.banner.show_notice(
            full.message,
            "Continue in a New Chat",
            lambda: self._continue_in_new_chat(conversation_id),
            kind="warning",
            sticky=True,
        )

    def _continue_in_new_chat(self, conversation_id: int) -> None:
        new = self._controller.continue_in_new_chat(conversation_id)
        if new is not None:
            self._window.open_conversation(new)


def _descendants(messages: list[Message], root_id: int) -> int:
    """How many messages sit below `root_id` in the tree."""
    children: dict[int | None, list[int]] = {}
    for message in messages:
        children.setdefault(message.parent_id, []).append(message.id)
    count, pending = 0, list(children.get(root_id, []))
    while pending:
        count += 1
        pending.extend(children.get(pending.pop(), []))
    return count
