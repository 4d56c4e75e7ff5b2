"""Replies read aloud, wired into the window: each reply's speaker button (click to read, click
again to pause or go on; its menu stops and sets the speed), Chat › Read Last Reply Aloud, and
new replies read as they stream when the settings ask for it or a voice conversation runs.
The reading itself is `ui.voice.read_aloud`, made when first used (QtMultimedia)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QToolButton

from app.generation.reply_events import StreamUpdate
from app.store.conversations import StoreError
from app.voice.voice_settings import VoiceSettings
from ui.chat.message_toolbar import SPEAK_BUTTON
from ui.chat.message_widget import MessageWidget
from ui.window.window_host import ChatPane

if TYPE_CHECKING:
    from ui.voice.read_aloud import ReadAloud, ReadingStatus
    from ui.window.branch_commands import BranchCommands


class ReadingHost(ChatPane, Protocol):
    branches: BranchCommands


class VoiceReading(QObject):
    def __init__(
        self,
        window: ReadingHost,
        settings: Callable[[], VoiceSettings],
        set_speed: Callable[[float], None],
        reads_new_replies: Callable[[], bool],
    ) -> None:
        """`settings()` are the voice settings now; `reads_new_replies()` whether a reply is
        read as it streams (the settings say so, or a voice conversation runs)."""
        super().__init__(window.window())
        self._window = window
        self._settings = settings
        self._set_speed = set_speed
        self._reads_new = reads_new_replies
        self._reader: ReadAloud | None = None
        self._following: int | None = None  # a streaming reply read as it grows
        self._speakers: dict[QToolButton, int] = {}
        window.chat_view.messageWidgetCreated.connect(self._on_message_widget)
        window.controller.streamUpdated.connect(self._on_stream)
        window.controller.busyChanged.connect(self._on_busy)

    def reader(self) -> ReadAloud:
        if self._reader is None:
            from ui.voice.read_aloud import ReadAloud  # QtMultimedia: when first used

            self._reader = ReadAloud(self._settings(), self)
            self._reader.statusChanged.connect(self._on_reading)
            self._reader.failed.connect(self._window.show_notice)
        return self._reader

    @property
    def started(self) -> bool:
        return self._reader is not None

    def settings_changed(self, settings: VoiceSettings) -> None:
        if self._reader is not None:
            self._reader.set_settings(settings)

    @Slot(object)
    def _on_message_widget(self, widget: MessageWidget) -> None:
        for button in widget.findChildren(QToolButton):
            if not button.property(SPEAK_BUTTON):
                continue
            from ui.voice.speaker_button import fit_speaker

            fit_speaker(button, self.stop, self._set_speed, lambda: self._settings().speed)
            button.clicked.connect(lambda _=False, w=widget: self.toggle(w))
            self._speakers[button] = int(widget.view.id)
            button.destroyed.connect(lambda _=None, b=button: self._speakers.pop(b, None))

    def toggle(self, widget: MessageWidget) -> None:
        """The speaker of `widget`'s reply was clicked: read it, or pause or go on."""
        from ui.voice.read_aloud import Reading

        reader = self.reader()
        message_id = int(widget.view.id)
        if reader.message_id == message_id:
            if reader.state is Reading.PAUSED:
                reader.resume()
            else:
                reader.pause()
            return
        self._following = None
        reader.read(message_id, widget.view.content)

    @Slot()
    def stop(self) -> None:
        if self._reader is not None:
            self._reader.stop()
        self._following = None

    @Slot()
    def read_last_reply(self) -> None:
        views = self._window.branches.path_views()
        replies = [v for v in views if v.role == "assistant" and v.content]
        if replies:
            self._following = None
            self.reader().read(int(replies[-1].id), replies[-1].content)

    def say(self, text: str, settings: VoiceSettings) -> None:
        """Read `text` (no reply's) with `settings`, e.g. Preferences' "Try the Voice"."""
        reader = self.reader()
        reader.set_settings(settings)
        reader.read(-1, text)

    @Slot(object)
    def _on_reading(self, status: ReadingStatus) -> None:
        from ui.voice.read_aloud import Reading
        from ui.voice.speaker_button import show_reading

        for button, message_id in list(self._speakers.items()):
            show_reading(button, status.state if message_id == status.message_id else Reading.IDLE)
        if status.state is Reading.IDLE and status.message_id is None:
            self.reader().set_settings(self._settings())  # after a sample in other settings

    @Slot(object)
    def _on_stream(self, update: StreamUpdate) -> None:
        window = self._window
        if not self._reads_new() or update.conversation_id != window.current_conversation_id:
            return
        if self._following not in (None, update.message_id):
            return
        reader = self.reader()
        if self._following is None and reader.speaking and reader.message_id != update.message_id:
            return  # the person is listening to another reply
        self._following = update.message_id
        reader.follow(update.message_id, update.text)

    @Slot(bool)
    def _on_busy(self, busy: bool) -> None:
        if busy or self._following is None:
            return
        message_id, self._following = self._following, None
        try:
            text = self._window.store.get_message(message_id).content
        except StoreError:
            text = ""
        self.reader().finish(message_id, text)

    def shutdown(self) -> None:
        if self._reader is not None:
            self._reader.shutdown()
