"""The composer's token count: how much of the model's context the draft (with the
conversation before it) would take.

Counting needs the model, on the worker thread, so it is asked a moment after the draft stops
changing rather than on every key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Slot

from app.generation.model_session import ModelState

if TYPE_CHECKING:
    from app.chat.prompt_counts import TokenCount
    from ui.window.window_host import ChatPane

TOKEN_COUNT_DEBOUNCE_MS = 300


class TokenCounter(QObject):
    def __init__(self, window: ChatPane) -> None:
        super().__init__(window.window())
        self._window = window
        self._timer = QTimer(self, singleShot=True, interval=TOKEN_COUNT_DEBOUNCE_MS)
        self._timer.timeout.connect(self._request)
        window.composer.draftChanged.connect(self.schedule)
        window.controller.tokenCount.connect(self._on_count)

    @Slot()
    def schedule(self) -> None:
        """Count again soon: the draft, the conversation, its settings or the model changed."""
        self._timer.start()

    def restart(self) -> None:
        """Another conversation opened: its count is unknown until the worker answers."""
        self._window.composer.set_token_info(None, None)
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    @Slot()
    def _request(self) -> None:
        cid, controller = self._window.current_conversation_id, self._window.controller
        if cid is not None and controller.model_state == ModelState.READY:
            composer = self._window.composer
            controller.counts.request_token_count(cid, composer.text(), composer.attachments())

    @Slot(object)
    def _on_count(self, count: TokenCount) -> None:
        if count.conversation_id == self._window.current_conversation_id:
            self._window.composer.set_token_info(
                count.count, count.context_length, count.overflow, count.knowledge_tokens
            )
