"""One reply read aloud at a time, with the voice the settings choose: the built-in voice
(sentences synthesized on their own thread, `app.voice.synthesis`, played in order by a
`PcmPlayer`) or the system's (`SystemVoice`).

A finished reply is read from its whole text; a reply still streaming is read as it grows
(`follow` with its text so far, then `finish`): each sentence as soon as it is complete
(`app.voice.spoken_text.SentenceFeed`), so the first is heard while the model still writes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import Enum

from PySide6.QtCore import QObject, Signal, Slot

from app.voice.natural_voice import SAMPLE_RATE
from app.voice.spoken_text import SentenceFeed, spoken_sentences
from app.voice.synthesis import SpeechSynthesis, SpokenSentence, SynthesisFailure
from app.voice.voice_settings import VoiceEngine, VoiceSettings
from ui.voice.pcm_player import PcmPlayer
from ui.voice.system_voice import SystemVoice


class Reading(Enum):
    IDLE = "idle"
    PREPARING = "preparing"  # asked; the first sound is still being made
    SPEAKING = "speaking"
    PAUSED = "paused"


@dataclass(frozen=True, slots=True)
class ReadingStatus:
    message_id: int | None  # the reply being read (None when idle)
    state: Reading


class ReadAloud(QObject):
    statusChanged = Signal(ReadingStatus)
    finished = Signal(int)  # the reply read to its end (not stopped)
    failed = Signal(str)
    # From a sentence being ready to be said to its sound starting (the bench's figure).
    firstSound = Signal(float)

    def __init__(self, settings: VoiceSettings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._settings = settings
        self._synthesis: SpeechSynthesis | None = None
        self._player: PcmPlayer | None = None
        self._system: SystemVoice | None = None
        self._reading = 0  # ids for the synthesis thread: a stopped reading's sentences drop
        self._message: int | None = None
        self._feed = SentenceFeed()
        self._asked = 0  # sentences asked of the voice
        self._heard = 0  # sentences whose audio reached the player
        self._complete = True  # the reply's text is whole (not streaming)
        self._state = Reading.IDLE
        self._ready_at: float | None = None

    # -- asked by the window ------------------------------------------------------------------

    @property
    def message_id(self) -> int | None:
        return self._message

    @property
    def state(self) -> Reading:
        return self._state

    @property
    def speaking(self) -> bool:
        """Sound is being made or about to be (a voice conversation mutes the mic meanwhile)."""
        return self._state is not Reading.IDLE

    def set_settings(self, settings: VoiceSettings) -> None:
        self._settings = settings
        if self._system is not None:
            self._system.set_speed(settings.speed)
            self._system.set_voice(settings.system_voice)

    def read(self, message_id: int, text: str) -> None:
        """Read a finished reply from its start."""
        self._begin(message_id, complete=True)
        self._say(spoken_sentences(text))
        self._check_done()

    def follow(self, message_id: int, text_so_far: str) -> None:
        """A streaming reply grew: read what is complete of it (starting if need be)."""
        if self._message != message_id:
            self._begin(message_id, complete=False)
        self._say(self._feed.update(text_so_far))

    def finish(self, message_id: int, text: str) -> None:
        """The streaming reply ended with `text`: read the rest."""
        if self._message != message_id:
            return
        self._complete = True
        self._say(self._feed.finish(text))
        self._check_done()

    def pause(self) -> None:
        if self._state in (Reading.SPEAKING, Reading.PREPARING):
            for engine in (self._player, self._system):
                if engine is not None:
                    engine.pause()
            self._set(Reading.PAUSED)

    def resume(self) -> None:
        if self._state is Reading.PAUSED:
            for engine in (self._player, self._system):
                if engine is not None:
                    engine.resume()
            self._set(Reading.SPEAKING)

    def stop(self) -> None:
        if self._synthesis is not None:
            self._synthesis.cancel(self._reading)
        for engine in (self._player, self._system):
            if engine is not None:
                engine.stop()
        self._message = None
        self._set(Reading.IDLE)

    def shutdown(self) -> None:
        self.stop()
        if self._synthesis is not None:
            self._synthesis.shutdown()

    # -- the voices ---------------------------------------------------------------------------

    def _begin(self, message_id: int, complete: bool) -> None:
        self.stop()
        self._reading += 1
        self._message = message_id
        self._feed = SentenceFeed()
        self._asked = self._heard = 0
        self._complete = complete
        self._set(Reading.PREPARING)

    def _natural(self) -> bool:
        return self._settings.engine is VoiceEngine.NATURAL

    def _say(self, sentences: list[str]) -> None:
        if not sentences or self._message is None:
            return
        self._ready_at = time.perf_counter() if self._asked == 0 else self._ready_at
        if self._natural():
            synthesis = self._natural_engine()
            for sentence in sentences:
                synthesis.say(
                    self._reading,
                    self._asked,
                    sentence,
                    self._settings.natural_voice,
                    self._settings.speed,
                )
                self._asked += 1
        else:
            system = self._system_engine()
            system.say(sentences)
            self._asked += len(sentences)

    def _natural_engine(self) -> SpeechSynthesis:
        if self._synthesis is None:
            self._synthesis = SpeechSynthesis(self)
            self._synthesis.sentenceReady.connect(self._on_sentence)
            self._synthesis.failed.connect(self._on_synthesis_failed)
        if self._player is None:
            self._player = PcmPlayer(SAMPLE_RATE, self)
            self._player.idle.connect(self._on_idle)
            self._player.firstSound.connect(self._on_first_sound)
            self._player.failed.connect(self._on_failed)
        return self._synthesis

    def _system_engine(self) -> SystemVoice:
        if self._system is None:
            self._system = SystemVoice(parent=self)
            self._system.idle.connect(self._on_idle)
            self._system.firstSound.connect(self._on_first_sound)
            self._system.failed.connect(self._on_failed)
        self._system.set_speed(self._settings.speed)
        self._system.set_voice(self._settings.system_voice)
        return self._system

    @Slot(object)
    def _on_sentence(self, sentence: SpokenSentence) -> None:
        if sentence.reading != self._reading or self._player is None:
            return
        self._heard += 1
        if not sentence.pcm:  # nothing the voice could say in it (symbols only)
            self._check_done()
        elif self._player.play(sentence.pcm) and self._state is Reading.PAUSED:
            self._player.pause()

    @Slot(float)
    def _on_first_sound(self, _after_s: float) -> None:
        if self._ready_at is not None:
            self.firstSound.emit(time.perf_counter() - self._ready_at)
            self._ready_at = None
        if self._state is Reading.PREPARING:
            self._set(Reading.SPEAKING)

    @Slot()
    def _on_idle(self) -> None:
        if not self._natural():
            self._heard = self._asked
        self._check_done()

    def _check_done(self) -> None:
        engine_busy = (self._player is not None and self._player.active) or (
            self._system is not None and self._system.active
        )
        if self._complete and self._heard >= self._asked and not engine_busy:
            message = self._message
            if message is None:
                return
            self._message = None
            self._set(Reading.IDLE)
            self.finished.emit(message)

    @Slot(object)
    def _on_synthesis_failed(self, failure: SynthesisFailure) -> None:
        if failure.reading == self._reading:
            self._on_failed(failure.message)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.stop()
        self.failed.emit(message)

    def _set(self, state: Reading) -> None:
        if state is not self._state:
            self._state = state
            self.statusChanged.emit(ReadingStatus(self._message, state))
