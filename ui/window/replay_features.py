"""Each reply's Details button, its dialog and Replay, wired into the window: the dialog asks
the controller's `replays` for the rows and the replay, shows the outcome when it comes, and
keeps the replayed reply as a sibling only when the person asks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QToolButton

from app.replay.outcome import ReplayOutcome
from app.store.conversations import StoreError
from ui.chat.message_toolbar import DETAILS_BUTTON
from ui.chat.message_widget import MessageWidget
from ui.window.window_host import ChatPane

if TYPE_CHECKING:
    from ui.dialogs.reply_details import ReplyDetailsDialog


class ReplayFeatures(QObject):
    def __init__(self, window: ChatPane) -> None:
        super().__init__(window.window())
        self._window = window
        self._replays = window.controller.replays
        self.dialog: ReplyDetailsDialog | None = None
        window.chat_view.messageWidgetCreated.connect(self._attach)
        self._replays.finished.connect(self._on_finished)
        self._replays.failed.connect(self._on_failed)

    @Slot(object)
    def _attach(self, widget: MessageWidget) -> None:
        for button in widget.findChildren(QToolButton):
            if button.property(DETAILS_BUTTON):
                button.clicked.connect(lambda _=False, w=widget: self.open(int(w.view.id)))

    def open(self, message_id: int) -> ReplyDetailsDialog | None:
        from ui.dialogs.reply_details import ReplyDetailsDialog  # when first used: a fast start

        if message_id in self._window.controller.compare.hidden_ids():
            self._window.show_notice(
                "This compare is blind: keep an answer first, then its details name its model."
            )
            return None
        try:
            details = self._replays.details(message_id)
        except StoreError as exc:
            self._window.show_notice(str(exc))
            return None
        if self.dialog is not None:
            self.dialog.close()
        self.dialog = ReplyDetailsDialog(details, self._window.window())
        self.dialog.replayRequested.connect(self._replays.start)
        self.dialog.keepRequested.connect(self._keep)
        self.dialog.show()
        return self.dialog

    def _current(self, message_id: int) -> ReplyDetailsDialog | None:
        dialog = self.dialog
        return dialog if dialog is not None and dialog.details.message_id == message_id else None

    @Slot(object)
    def _on_finished(self, outcome: ReplayOutcome) -> None:
        if (dialog := self._current(outcome.message_id)) is not None:
            dialog.show_outcome(outcome)

    @Slot(int, str)
    def _on_failed(self, message_id: int, message: str) -> None:
        if (dialog := self._current(message_id)) is not None:
            dialog.show_failure(message)
        else:
            self._window.show_notice(message)

    def _keep(self, outcome: ReplayOutcome) -> None:
        if self._replays.keep(outcome) is not None and self.dialog is not None:
            self.dialog.close()
