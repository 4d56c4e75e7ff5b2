"""When a person has finished speaking, from the microphone's level alone.

A voice conversation listens until the person has spoken and then been silent for about 1.5 s.
The level that counts as speech follows the room: the quietest level heard recently (the noise
floor) plus a margin, never below an absolute floor, so a fan or a hum is not a voice. Speech
must last a moment (a cough or a click does not start a turn).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

SPEECH_MARGIN_DB = 12.0  # above the noise floor
MIN_SPEECH_DB = -45.0  # never quieter than this (as Open WebUI's call mode)
MIN_SPEECH_S = 0.25  # this much speech starts a turn
FLOOR_RISE_DB_PER_S = 3.0  # the floor creeps up this fast, so it follows a room getting louder
CALIBRATION_S = 0.3  # the first moments set the floor: nobody speaks the instant listening starts


class Turn(Enum):
    WAITING = "waiting"  # nothing said yet
    SPEAKING = "speaking"
    ENDED = "ended"  # spoken, then silent long enough


@dataclass
class TurnDetector:
    """Feed it each chunk's level and the time it covers; it says where the turn stands."""

    silence_s: float = 1.5
    floor_db: float = MIN_SPEECH_DB - SPEECH_MARGIN_DB
    _state: Turn = Turn.WAITING
    _loud_s: float = 0.0
    _quiet_s: float = 0.0
    _heard_s: float = 0.0
    _calibration: list[float] = field(default_factory=list[float])

    @property
    def state(self) -> Turn:
        return self._state

    @property
    def threshold_db(self) -> float:
        return max(MIN_SPEECH_DB, self.floor_db + SPEECH_MARGIN_DB)

    def feed(self, level: float, seconds: float) -> Turn:
        if self._state is Turn.ENDED:
            return self._state
        self._heard_s += seconds
        if self._heard_s <= CALIBRATION_S:
            self._calibration.append(level)
            self.floor_db = max(self._calibration)  # the room at its loudest, before speech
            return self._state
        loud = level >= self.threshold_db
        if not loud:  # the floor follows quiet sound down at once, and up slowly
            rise = self.floor_db + FLOOR_RISE_DB_PER_S * seconds
            self.floor_db = level if level < self.floor_db else min(level, rise)
        if loud:
            self._loud_s += seconds
            self._quiet_s = 0.0
            if self._loud_s >= MIN_SPEECH_S:
                self._state = Turn.SPEAKING
        else:
            self._quiet_s += seconds
            if self._state is Turn.WAITING and self._quiet_s > MIN_SPEECH_S:
                self._loud_s = 0.0  # a click, not the start of speech
            if self._state is Turn.SPEAKING and self._quiet_s >= self.silence_s:
                self._state = Turn.ENDED
        return self._state

    def reset(self) -> None:
        """Listen for a new turn in the same room (the floor is kept)."""
        self._state, self._loud_s, self._quiet_s = Turn.WAITING, 0.0, 0.0
        self._heard_s = CALIBRATION_S
