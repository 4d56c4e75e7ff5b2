"""Voice settings survive a restart, and stored values that are unusable fall back to the
defaults rather than failing."""

from __future__ import annotations

from pathlib import Path

from app.settings import Preferences
from app.voice.voice_settings import VoiceEngine, VoiceSettings


def test_settings_are_kept_and_bad_values_fall_back(tmp_path: Path) -> None:
    preferences = Preferences(tmp_path / "settings.ini")
    assert VoiceSettings.of(preferences) == VoiceSettings()
    chosen = VoiceSettings("whisper-turbo", "de", VoiceEngine.SYSTEM, "heart", "Anna", 1.5, True)
    chosen.save_to(preferences)
    preferences.sync()
    assert VoiceSettings.of(Preferences(tmp_path / "settings.ini")) == chosen
    preferences.voice = {"engine": "robot", "speed": 9, "silence_s": "x", "language": 3}
    read = VoiceSettings.of(preferences)
    assert (read.engine, read.speed, read.silence_s, read.language) == (
        VoiceEngine.NATURAL,
        2.0,
        1.5,
        "",
    )
