"""The voice settings (Preferences › Voice), kept as one JSON object in the preferences file."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from enum import StrEnum
from typing import Any

from app.settings import Preferences

MIN_SPEED, MAX_SPEED = 0.5, 2.0
MIN_SILENCE_S, MAX_SILENCE_S = 0.8, 5.0


class VoiceEngine(StrEnum):
    NATURAL = "natural"  # the built-in voice (hibari), the same on every computer
    SYSTEM = "system"  # the system's voices, through Qt's text-to-speech


@dataclass(frozen=True, slots=True)
class VoiceSettings:
    speech_model: str | None = None  # the library entry (folder name) that transcribes
    language: str = ""  # a Whisper language code; "" detects it
    engine: VoiceEngine = VoiceEngine.NATURAL
    natural_voice: str = "heart"
    system_voice: str = ""  # a system voice's name; "" is the system's default
    speed: float = 1.0
    read_new_replies: bool = False  # read each new reply aloud as it streams
    silence_s: float = 1.5  # a voice conversation's end of turn

    @classmethod
    def of(cls, preferences: Preferences) -> VoiceSettings:
        """What is stored, each value that is missing or unusable left at its default."""
        stored = preferences.voice
        default = cls()
        values: dict[str, Any] = {}
        for field in fields(cls):
            value = stored.get(field.name, getattr(default, field.name))
            values[field.name] = _checked(field.name, value, getattr(default, field.name))
        return cls(**values)

    def save_to(self, preferences: Preferences) -> None:
        preferences.voice = {
            k: str(v) if isinstance(v, StrEnum) else v for k, v in asdict(self).items()
        }


def _checked(name: str, value: object, default: Any) -> Any:
    if name == "engine":
        return VoiceEngine(value) if value in tuple(VoiceEngine) else default
    if name == "speech_model":
        return value if isinstance(value, str) and value else None
    if name == "speed":
        return _number(value, MIN_SPEED, MAX_SPEED, default)
    if name == "silence_s":
        return _number(value, MIN_SILENCE_S, MAX_SILENCE_S, default)
    return value if isinstance(value, type(default)) else default


def _number(value: object, low: float, high: float, default: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return default
    return min(high, max(low, float(value)))
