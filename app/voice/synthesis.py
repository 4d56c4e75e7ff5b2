"""The built-in voice's synthesis on a thread of its own, sentence by sentence, so the GUI
thread never waits for it and the inference worker never does it (it is no MLX work).

Each sentence is asked for with the reading it belongs to (`reading`, an id the caller picks)
and comes back as a `SpokenSentence` through `sentenceReady`, in the order asked. Cancelling a
reading drops its sentences still waiting; one being synthesized is dropped when it is done.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from app.voice.natural_voice import SAMPLE_RATE, NaturalVoice

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SpokenSentence:
    reading: int
    index: int  # the sentence's place in its reading
    text: str
    pcm: bytes  # 16-bit mono PCM
    sample_rate: int
    synthesis_s: float  # how long it took to make


@dataclass(frozen=True, slots=True)
class SynthesisFailure:
    reading: int
    message: str  # for the person


@dataclass(frozen=True, slots=True)
class _Ask:
    reading: int
    index: int
    text: str
    voice: str
    speed: float


class SpeechSynthesis(QObject):
    """Create on the GUI thread; its signals arrive there."""

    sentenceReady = Signal(SpokenSentence)
    failed = Signal(SynthesisFailure)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._queue: queue.Queue[_Ask | None] = queue.Queue()
        self._lock = threading.Lock()
        self._cancelled: set[int] = set()
        self._voices: dict[str, NaturalVoice] = {}
        self._thread = threading.Thread(target=self._run, name="speech-synthesis", daemon=True)
        self._thread.start()

    def say(self, reading: int, index: int, text: str, voice: str, speed: float) -> None:
        self._queue.put(_Ask(reading, index, text, voice, speed))

    def cancel(self, reading: int) -> None:
        with self._lock:
            self._cancelled.add(reading)

    def shutdown(self) -> None:
        self._queue.put(None)

    def _dropped(self, reading: int) -> bool:
        with self._lock:
            return reading in self._cancelled

    def _run(self) -> None:
        while (ask := self._queue.get()) is not None:
            if self._dropped(ask.reading):
                continue
            voice = self._voices.setdefault(ask.voice, NaturalVoice(ask.voice))
            began = time.perf_counter()
            try:
                pcm = voice.speak(ask.text, ask.speed)
            except Exception as error:  # a voice that cannot load, a sentence it cannot say
                _log.warning("The built-in voice failed on %r", ask.text, exc_info=error)
                self.cancel(ask.reading)
                self.failed.emit(
                    SynthesisFailure(ask.reading, f"The built-in voice could not speak: {error}")
                )
                continue
            if not self._dropped(ask.reading):
                took = time.perf_counter() - began
                self.sentenceReady.emit(
                    SpokenSentence(ask.reading, ask.index, ask.text, pcm, SAMPLE_RATE, took)
                )
