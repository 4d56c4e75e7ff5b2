"""A voice conversation's end of turn: speech, then the chosen pause, whatever the room's hum;
a click is no speech; and the sample conversions between a device and Whisper."""

from __future__ import annotations

import numpy as np
import pytest

from app.voice.samples import SILENCE_DB, level_db, pcm16, resampled, samples16
from app.voice.turn_taking import Turn, TurnDetector

CHUNK_S = 0.05


def _feed(detector: TurnDetector, level: float, seconds: float) -> Turn:
    state = detector.state
    for _ in range(round(seconds / CHUNK_S)):
        state = detector.feed(level, CHUNK_S)
    return state


@pytest.mark.parametrize("hum_db", [SILENCE_DB, -50.0, -35.0])
def test_a_turn_ends_after_speech_and_then_the_pause(hum_db: float) -> None:
    detector = TurnDetector(silence_s=1.5)
    voice = max(hum_db + 25.0, -30.0)
    assert _feed(detector, hum_db, 2.0) is Turn.WAITING  # the room alone starts nothing
    assert _feed(detector, voice, 1.0) is Turn.SPEAKING
    assert _feed(detector, hum_db, 1.2) is Turn.SPEAKING  # a pause for breath
    assert _feed(detector, voice, 0.5) is Turn.SPEAKING
    assert _feed(detector, hum_db, 1.4) is Turn.SPEAKING
    assert _feed(detector, hum_db, 0.15) is Turn.ENDED


def test_a_click_is_not_speech() -> None:
    detector = TurnDetector(silence_s=1.5)
    _feed(detector, -70.0, 1.0)
    assert _feed(detector, -10.0, 0.1) is Turn.WAITING
    assert _feed(detector, -70.0, 3.0) is Turn.WAITING
    detector.reset()
    assert detector.state is Turn.WAITING


def test_levels_and_conversions() -> None:
    tone = 0.5 * np.sin(2 * np.pi * 440 * np.arange(48_000) / 48_000)
    pcm = pcm16(tone)
    assert level_db(pcm) == pytest.approx(20 * np.log10(0.5 / np.sqrt(2)), abs=0.1)
    assert level_db(b"\x00\x00" * 100) == SILENCE_DB
    down = resampled(samples16(pcm), 48_000, 16_000)
    assert len(down) == 16_000
    spectrum = np.abs(np.fft.rfft(down))
    assert np.argmax(spectrum) == 440  # the same tone at the new rate (1 Hz per bin)
    stereo = np.stack([tone, -tone], axis=1).reshape(-1)
    assert np.allclose(samples16(pcm16(stereo), channels=2), 0.0, atol=1e-4)
