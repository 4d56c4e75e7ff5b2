"""The system's voices through Qt's text-to-speech: on macOS the voices of System Settings ›
Accessibility › Spoken Content (AVSpeechSynthesizer), on Linux speech-dispatcher's. Sentences
are said one after another; the engine's rate follows the speed (twice as fast is rate 1).

A system with no speech engine (Linux without speech-dispatcher running) has no voices: that is
said in words (`problem`), and the built-in voice remains.
"""

from __future__ import annotations

import math
from collections import deque

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtTextToSpeech import QTextToSpeech, QVoice

NO_VOICES = (
    "This system has no voices for Qt's text-to-speech (on Linux, install and start "
    "speech-dispatcher). The built-in voice works everywhere."
)


def rate_for(speed: float) -> float:
    """Qt's rate (-1 to 1, 0 normal) for a speed (0.5 to 2): half and double speed at the ends."""
    return max(-1.0, min(1.0, math.log2(speed)))


class SystemVoice(QObject):
    """`say(sentences)` queues; `pause`, `resume`, `stop`; `idle` when the queue is said."""

    idle = Signal()
    firstSound = Signal(float)  # seconds from the first `say` to speech starting
    failed = Signal(str)

    def __init__(self, engine: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tts = QTextToSpeech(engine, self) if engine else QTextToSpeech(self)
        self._queue: deque[str] = deque()
        self._speaking = False
        self._paused = False
        self._tts.stateChanged.connect(self._on_state)

    def problem(self) -> str | None:
        """Why the system's voices cannot speak here, or None."""
        if self._tts.state() == QTextToSpeech.State.Error:
            detail = self._tts.errorString()
            return f"{NO_VOICES} ({detail})" if detail else NO_VOICES
        return None if self._tts.availableVoices() else NO_VOICES

    def voices(self) -> list[str]:
        return [voice.name() for voice in self._tts.availableVoices()]

    def set_voice(self, name: str) -> None:
        chosen: list[QVoice] = [v for v in self._tts.availableVoices() if v.name() == name]
        if chosen:
            self._tts.setVoice(chosen[0])

    def set_speed(self, speed: float) -> None:
        self._tts.setRate(rate_for(speed))

    @property
    def active(self) -> bool:
        return self._speaking or bool(self._queue)

    def say(self, sentences: list[str]) -> None:
        problem = self.problem()
        if problem is not None:
            self.failed.emit(problem)
            return
        self._queue.extend(sentences)
        if not self._speaking and not self._paused:
            self._next()

    def pause(self) -> None:
        if self._speaking and not self._paused:
            self._paused = True
            self._tts.pause()

    def resume(self) -> None:
        if self._paused:
            self._paused = False
            self._tts.resume()

    def stop(self) -> None:
        self._queue.clear()
        self._speaking = self._paused = False
        self._tts.stop()

    def _next(self) -> None:
        if self._queue:
            self._speaking = True
            self._tts.say(self._queue.popleft())

    @Slot(QTextToSpeech.State)
    def _on_state(self, state: QTextToSpeech.State) -> None:
        if state == QTextToSpeech.State.Speaking:
            self.firstSound.emit(0.0)
        elif state == QTextToSpeech.State.Ready and self._speaking and not self._paused:
            self._speaking = False
            if self._queue:
                self._next()
            else:
                self.idle.emit()
        elif state == QTextToSpeech.State.Error:
            self.stop()
            self.failed.emit(self.problem() or NO_VOICES)
