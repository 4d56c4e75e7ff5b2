"""A hands-free voice conversation (Chat › Voice Conversation): listen, end the person's turn
after a pause (`app.voice.turn_taking`), transcribe, send, read the reply aloud as it streams,
listen again, until the person ends it.

The microphone is closed from the end of the person's turn until the reply has been read, so
the reply's own voice is never heard as the person's words (there is no talking over the reply:
without echo cancellation the speakers would interrupt themselves). Mute stops listening for a
while; End stops everything, the reading included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QVBoxLayout

from app.voice.turn_taking import Turn, TurnDetector
from app.voice.voice_settings import VoiceSettings
from ui.voice.conversation_bar import ConversationBar, Stage
from ui.window.window_host import ChatPane

if TYPE_CHECKING:
    from ui.voice.read_aloud import ReadingStatus
    from ui.voice.recorder import Recorder, RecordingLevel
    from ui.window.voice_reading import VoiceReading


@dataclass(frozen=True, slots=True)
class StageShown:
    """Where a voice conversation stands now."""

    stage: Stage


class ConversationWindow(ChatPane, Protocol):
    def send(self, text: str) -> bool: ...


class ConversationVoice(Protocol):
    """What a conversation uses of the window's voice features."""

    settings: VoiceSettings
    reading: VoiceReading

    def recorder(self) -> Recorder: ...

    def transcribe(self, pcm: bytes, done: Callable[[str], object] | None = None) -> bool: ...

    def cancel_dictation(self) -> None: ...


# After the reply was read, a moment before listening: the room's echo dies down.
LISTEN_AGAIN_MS = 400


class VoiceConversation(QObject):
    stageChanged = Signal(StageShown)
    ended = Signal()

    def __init__(
        self, features: ConversationVoice, window: ConversationWindow, parent: QObject
    ) -> None:
        super().__init__(parent)
        self._features = features
        self._window = window
        self._detector = TurnDetector(features.settings.silence_s)
        self._stage = Stage.LISTENING
        self._muted = False
        self._ended = False
        self.bar = ConversationBar()
        layout = window.composer.layout()
        if isinstance(layout, QVBoxLayout):
            layout.insertWidget(0, self.bar)
        self.bar.show()  # the composer is on screen already
        self.bar.muteToggled.connect(self.set_muted)
        self.bar.endRequested.connect(self.end)
        reader = features.reading.reader()
        reader.statusChanged.connect(self._on_reading)
        reader.finished.connect(self._on_read)
        window.controller.busyChanged.connect(self._on_busy)

    @property
    def stage(self) -> Stage:
        return self._stage

    def start(self) -> None:
        self.listen()

    @Slot()
    def listen(self) -> None:
        if self._stage is Stage.SPEAKING and self._features.reading.reader().speaking:
            return
        self._detector = TurnDetector(self._features.settings.silence_s)
        recorder = self._features.recorder()
        recorder.set_muted(self._muted)
        problem = recorder.start()
        if problem is not None:
            self._window.show_notice(problem)
            self.end()
            return
        self._show(Stage.MUTED if self._muted else Stage.LISTENING)

    def on_level(self, level: RecordingLevel) -> None:
        self.bar.meter.set_level(level.level_db)
        if self._muted or self._stage is not Stage.LISTENING:
            return
        if self._detector.feed(level.level_db, level.chunk_s) is Turn.ENDED:
            self._end_turn()

    def _end_turn(self) -> None:
        self._show(Stage.TRANSCRIBING)
        pcm = self._features.recorder().stop()  # closed until the reply has been read
        if not self._features.transcribe(pcm, done=self._heard):
            self.end()

    def _heard(self, text: str) -> None:
        if self._stage is not Stage.TRANSCRIBING:
            return  # ended meanwhile
        if not text.strip():
            self.listen()
            return
        self._show(Stage.THINKING)
        if not self._window.send(text):
            self.listen()  # the window said why (a model still loading...)

    def transcription_failed(self) -> None:
        if self._stage is Stage.TRANSCRIBING:
            self.listen()

    @Slot(object)
    def _on_reading(self, status: ReadingStatus) -> None:
        from ui.voice.read_aloud import Reading

        if status.state is not Reading.IDLE and self._stage is Stage.THINKING:
            self._show(Stage.SPEAKING)

    @Slot(int)
    def _on_read(self, _message_id: int) -> None:
        if self._stage in (Stage.SPEAKING, Stage.THINKING):
            self._stage = Stage.THINKING  # not listening yet: the echo dies down first
            QTimer.singleShot(LISTEN_AGAIN_MS, self._listen_if_waiting)

    @Slot(bool)
    def _on_busy(self, busy: bool) -> None:
        # A reply that ended with nothing to read (an error, a tool call) hands the turn back.
        if not busy and self._stage is Stage.THINKING:
            QTimer.singleShot(LISTEN_AGAIN_MS, self._listen_if_waiting)

    @Slot()
    def _listen_if_waiting(self) -> None:
        if self._stage is Stage.THINKING and not self._features.reading.reader().speaking:
            self.listen()

    @Slot(bool)
    def set_muted(self, muted: bool) -> None:
        self._muted = muted
        self._features.recorder().set_muted(muted)
        self._detector.reset()
        if self._stage in (Stage.LISTENING, Stage.MUTED):
            self._show(Stage.MUTED if muted else Stage.LISTENING)

    @Slot()
    def end(self) -> None:
        if self._ended:
            return
        self._ended = True
        features = self._features
        features.recorder().cancel()
        features.reading.stop()
        features.cancel_dictation()
        reader = features.reading.reader()
        reader.statusChanged.disconnect(self._on_reading)
        reader.finished.disconnect(self._on_read)
        self._window.controller.busyChanged.disconnect(self._on_busy)
        self._stage = Stage.LISTENING
        self.bar.hide()
        self.bar.deleteLater()
        self.ended.emit()
        self.deleteLater()

    def _show(self, stage: Stage) -> None:
        self._stage = stage
        self.bar.show_stage(stage)
        self.stageChanged.emit(StageShown(stage))
