"""What the composer holds besides text: the files attached to the draft and the chat's Think
switch, kept in step with the controller.

Files asked for (paperclip, paste, or a drop on the window that is no chat export) are read
and counted on the worker; each comes back through `attachmentReady` as a chip, or as a notice
saying why it was refused. The Think controls show only for a model whose template reads such
a switch and write the person's choice into the open chat's params.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QDragEnterEvent

from app.store.conversations import StoreError
from ui.chat.composer import local_files
from ui.window.window_host import ChatPane

if TYPE_CHECKING:
    from ui.window.model_status_presenter import ModelStatusPresenter
    from ui.window.token_counter import TokenCounter


class ExtrasHost(ChatPane, Protocol):
    """The window as the composer's extras use it."""

    token_counter: TokenCounter
    model_status: ModelStatusPresenter

    def setAcceptDrops(self, on: bool) -> None: ...


class ComposerExtras(QObject):
    def __init__(self, window: ExtrasHost) -> None:
        super().__init__(window)
        self._window = window
        composer, controller = window.composer, window.controller
        composer.attachRequested.connect(self.attach)
        composer.think.changed.connect(self._on_think_changed)
        controller.attachmentReady.connect(self._on_attachment_ready)
        window.model_status.ready.connect(self.refresh_think)
        window.setAcceptDrops(True)

    # -- files ------------------------------------------------------------------------------

    @Slot(list)
    def attach(self, paths: list[str]) -> None:
        window = self._window
        if window.current_conversation_id is None:
            window.new_chat()
        cid = window.current_conversation_id
        for path in paths:
            window.controller.counts.attach_file(cid, path)

    @Slot(object)
    def _on_attachment_ready(self, payload: dict[str, Any]) -> None:
        # A file read for another chat (the person switched meanwhile) is not attached here.
        if payload["conversation_id"] == self._window.current_conversation_id:
            self._window.composer.add_attachment(payload["attachment"])

    def drag_enter(self, event: QDragEnterEvent) -> None:
        if local_files(event.mimeData()):
            event.acceptProposedAction()

    # -- the Think switch -------------------------------------------------------------------

    @Slot()
    def refresh_think(self) -> None:
        """Show the controls the loaded model takes, with the open chat's choices."""
        window = self._window
        info = window.controller.model_info or {}
        controls = window.composer.think
        controls.set_support(bool(info.get("think_switch")), info.get("effort_levels") or [])
        cid = window.current_conversation_id
        if cid is None:
            return
        try:
            controls.set_values(window.store.get_conversation(cid).params)
        except StoreError as exc:
            window.show_notice(str(exc))

    @Slot(object)
    def _on_think_changed(self, change: dict[str, Any]) -> None:
        window = self._window
        cid = window.current_conversation_id
        if cid is None:
            return
        window.controller.change_params(cid, change)
        window.token_counter.schedule()  # the template renders a different prompt
