"""The microphone, headless: what a WAV played into the virtual microphone (tests.virtual_mic)
says is what the recorder records, at Whisper's 16 kHz, with a level that moves and a time
that grows; cancel keeps nothing; a muted recorder keeps nothing of what it hears."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtMultimedia import QMediaDevices

from tests.tiny_whisper import spoken
from tests.virtual_mic import SINK, play, write_wav
from ui.voice.microphone import MicState, microphone_state
from ui.voice.recorder import Recorder, RecordingLevel

TIMEOUT_MS = 20_000


def _correlation(recorded: np.ndarray, source: np.ndarray) -> float:
    """The best normalised correlation of `source`'s speech anywhere in `recorded`."""
    voiced = np.nonzero(np.abs(source) > 100)[0]
    source = source[voiced[0] : voiced[-1] + 1]  # the voice's own silence around it left out
    full = np.correlate(recorded, source, mode="valid") if len(recorded) >= len(source) else None
    assert full is not None, "recorded less than was played"
    lag = int(np.argmax(np.abs(full)))
    window = recorded[lag : lag + len(source)]
    return float(np.corrcoef(window, source)[0, 1])


def test_what_is_played_into_the_microphone_is_recorded(
    qtbot, virtual_mic: dict[str, str], tmp_path: Path
) -> None:
    assert microphone_state() is MicState.READY
    assert [d.description() for d in QMediaDevices.audioInputs()]
    pcm = spoken("Testing the microphone.")
    wav = write_wav(tmp_path / "said.wav", pcm)
    recorder = Recorder()
    levels: list[RecordingLevel] = []
    recorder.levelChanged.connect(levels.append)
    assert recorder.start() is None
    player = play(virtual_mic, wav)
    qtbot.waitUntil(lambda: player.poll() is not None, timeout=TIMEOUT_MS)
    # The server hands audio on with a latency of its own (about a second here): record on
    # until the speech has had that long to come through.
    played_s = len(pcm) / 2 / 16_000
    qtbot.waitUntil(lambda: recorder.seconds() > played_s + 1.5, timeout=TIMEOUT_MS)
    recorded = np.frombuffer(recorder.stop(), "<i2").astype(np.float32)
    source = np.frombuffer(pcm, "<i2").astype(np.float32)
    assert player.returncode == 0
    assert _correlation(recorded, source) > 0.95
    assert max(level.level_db for level in levels) > -40  # the meter moved with the speech
    assert levels[-1].seconds >= len(source) / 16_000 * 0.9
    assert not recorder.recording and recorder.stop() == b""
    assert SINK  # the sink the player used


def test_cancel_and_mute_keep_nothing(qtbot, virtual_mic: dict[str, str], tmp_path: Path) -> None:
    wav = write_wav(tmp_path / "said.wav", spoken("Nothing of this is kept."))
    recorder = Recorder()
    heard: list[RecordingLevel] = []
    recorder.levelChanged.connect(heard.append)
    assert recorder.start() is None
    recorder.set_muted(True)
    player = play(virtual_mic, wav)
    qtbot.waitUntil(lambda: sum(level.chunk_s for level in heard) > 1.0, timeout=TIMEOUT_MS)
    assert recorder.stop() == b""  # muted: the reply's own voice is never the person's words
    player.wait(TIMEOUT_MS / 1000)
    assert recorder.start() is None
    qtbot.wait(200)
    recorder.cancel()
    assert not recorder.recording and recorder.stop() == b""
