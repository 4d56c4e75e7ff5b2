"""How a reply being written shows in the window: its text, the prompt-reading progress, and
the busy state of the composer and the Chat menu.

Tokens arrive far faster than a person reads, and re-rendering Markdown is not free: only the
latest text is kept, and the streaming message is re-rendered at most `STREAM_FPS` times a
second. Re-rendering the whole conversation meanwhile (a switch of branch, a title change) shows
the newest streamed text, not the older one the store holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from ui.chat_view import ChatView
from ui.composer import Composer
from ui.status_panel import StatusPanel
from ui.view_models import MessageView
from ui.window_actions import WindowActions

STREAM_FPS = 30


class StreamPresenter(QObject):
    idle = Signal()  # no reply is being written any more

    def __init__(
        self,
        chat_view: ChatView,
        composer: Composer,
        status_panel: StatusPanel,
        actions: WindowActions,
        current_conversation: Callable[[], int | None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._chat_view = chat_view
        self._composer = composer
        self._status_panel = status_panel
        self._actions = actions
        self._current_conversation = current_conversation
        self._latest: dict[str, Any] | None = None  # the latest streamed text, not yet shown
        self._streamed_text: dict[int, str] = {}  # message id -> text newer than the store's
        self._timer = QTimer(self, singleShot=True, interval=1000 // STREAM_FPS)
        self._timer.timeout.connect(self._show)

    def with_streamed_text(self, views: list[MessageView]) -> list[MessageView]:
        """`views` with each streaming message's newest text."""
        shown = list(views)
        for i, view in enumerate(shown):
            newer = self._streamed_text.get(int(view.id))
            if newer is not None and view.status == "streaming":
                shown[i] = replace(view, content=newer)
        return shown

    def stop(self) -> None:
        """Show nothing more (the window is closing)."""
        self._timer.stop()

    @Slot(object)
    def on_stream(self, payload: dict[str, Any]) -> None:
        self._streamed_text[payload["message_id"]] = payload["text"]
        self._latest = payload
        if not self._timer.isActive():
            self._timer.start()

    @Slot()
    def _show(self) -> None:
        payload, self._latest = self._latest, None
        if payload is not None and payload["conversation_id"] == self._current_conversation():
            self._chat_view.update_streaming(str(payload["message_id"]), payload["text"])

    @Slot(object)
    def on_prefill(self, payload: dict[str, Any]) -> None:
        self._status_panel.set_prefill(payload["done"], payload["total"])

    @Slot(bool)
    def set_busy(self, busy: bool) -> None:
        self._composer.set_generating(busy)
        self._actions.stop.setEnabled(busy)
        self._actions.regenerate.setEnabled(not busy)
        self._actions.edit_last.setEnabled(not busy)
        if not busy:
            self._timer.stop()
            self._latest = None
            self._streamed_text.clear()
            self._status_panel.set_prefill(0, 0)
            self.idle.emit()
