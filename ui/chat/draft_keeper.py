"""Keeps the composer's unsent text per conversation, so typing survives a switch, a restart and a
crash.

The text is saved 500 ms after the last keystroke (one small SQLite write, never one per key),
at once before another conversation is shown, and when the app closes. Opening a conversation
puts its draft back in the composer. Sending clears it (the controller does, in the same step
that stores the message).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Slot

if TYPE_CHECKING:
    from app.chat.controller import ChatController
    from ui.chat.composer import Composer

SAVE_DELAY_MS = 500


class DraftKeeper(QObject):
    """Create one per window, after the composer; it connects itself."""

    def __init__(
        self, composer: Composer, controller: ChatController, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._composer = composer
        self._controller = controller
        self._cid: int | None = None
        self._saved = ""  # what the store holds for `_cid`
        # Drafts the store refused (a full disk): kept here, shown again, retried on each save.
        self._unsaved: dict[int, str] = {}
        self._timer = QTimer(self, singleShot=True, interval=SAVE_DELAY_MS)
        self._timer.timeout.connect(self.save)
        composer.draftChanged.connect(self._on_draft_changed)
        controller.conversationOpened.connect(self._on_conversation_opened)
        controller.closing.connect(self.save)

    @Slot()
    def save(self) -> None:
        """Save the composer's text for the open conversation now, if it changed, and retry
        any draft the store refused before."""
        self._timer.stop()
        text = self._composer.text()
        if self._cid is not None and text != self._saved:
            self._unsaved[self._cid] = text
        for cid, draft in list(self._unsaved.items()):
            if self._controller.save_draft(cid, draft):
                del self._unsaved[cid]
                if cid == self._cid:
                    self._saved = draft

    @Slot(str)
    def _on_draft_changed(self, _text: str) -> None:
        if self._cid is not None:
            self._timer.start()

    @Slot(int)
    def _on_conversation_opened(self, conversation_id: int) -> None:
        if conversation_id == self._cid:
            return
        self.save()
        self._cid = conversation_id
        self._saved = self._controller.draft(conversation_id)
        self._composer.set_text(self._unsaved.get(conversation_id, self._saved))
        self._timer.stop()  # putting the draft back is no edit to save
