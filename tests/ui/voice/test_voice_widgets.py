"""The microphone button's states and gestures (a click toggles, a hold talks, a blocked
microphone says why), the system's voices through Qt's mock engine and in words where there are
none, and `branchwise say` / `branchwise transcribe`: the transcript is mlx-whisper's own."""

from __future__ import annotations

import json
import sys
import wave
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from inference.speech.whisper import mlx_whisper, uses_fp16
from ui.voice import mic_button
from ui.voice.cli import say_main, transcribe_main
from ui.voice.mic_button import Dictation, MicButton
from ui.voice.system_voice import NO_VOICES, SystemVoice, rate_for


def test_a_click_toggles_a_hold_talks_and_a_blocked_microphone_says_why(
    qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    button = MicButton()
    qtbot.addWidget(button)
    heard: list[str] = []
    button.startRequested.connect(
        lambda: (heard.append("start"), button.set_state(Dictation.RECORDING))
    )
    button.stopRequested.connect(lambda: (heard.append("stop"), button.set_state(Dictation.IDLE)))
    button.blockedClicked.connect(lambda: heard.append("blocked"))
    qtbot.mouseClick(button.button, Qt.MouseButton.LeftButton)
    assert heard == ["start"] and button.state is Dictation.RECORDING  # a click keeps recording
    qtbot.mouseClick(button.button, Qt.MouseButton.LeftButton)
    assert heard == ["start", "stop"]
    monkeypatch.setattr(mic_button, "HOLD_S", 0.0)  # every press now lasts long enough to talk
    qtbot.mouseClick(button.button, Qt.MouseButton.LeftButton)
    assert heard == ["start", "stop", "start", "stop"]  # released: push-to-talk ends
    button.set_state(Dictation.BLOCKED, "No microphone: connect one (or turn one on) to dictate")
    assert button.button.toolTip().startswith("No microphone")
    assert button.button.accessibleName() == "Microphone unavailable"
    qtbot.mouseClick(button.button, Qt.MouseButton.LeftButton)
    assert heard[-1] == "blocked"
    button.set_state(Dictation.TRANSCRIBING)
    assert not button.button.isEnabled() and button.status.text() == "Transcribing…"


@pytest.mark.qt_log_ignore('Text-to-speech plug-in "no-such-engine" is not supported')
def test_system_voices_speak_through_qt_and_their_absence_is_said(qtbot) -> None:
    voice = SystemVoice("mock")
    assert voice.problem() is None and voice.voices()
    with qtbot.waitSignal(voice.idle, timeout=20_000):
        voice.say(["Hello there.", "This is the mock engine."])
        assert voice.active
    assert not voice.active
    assert rate_for(2.0) == 1.0 and rate_for(0.5) == -1.0 and rate_for(1.0) == 0.0
    missing = SystemVoice("no-such-engine")
    assert missing.problem() is not None and missing.problem().startswith(NO_VOICES)
    failures: list[str] = []
    missing.failed.connect(failures.append)
    missing.say(["Anyone there?"])
    assert failures and failures[0].startswith(NO_VOICES)


def test_say_writes_the_built_in_voice_and_transcribe_prints_mlx_whispers_text(
    tmp_path: Path, tiny_whisper_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "said.wav"
    assert say_main(["Hello from Branchwise.", "--out", str(out), "--speed", "1.25"]) == 0
    with wave.open(str(out), "rb") as file:
        assert (file.getframerate(), file.getnchannels(), file.getsampwidth()) == (24_000, 1, 2)
        assert file.getnframes() > 24_000 // 2
    assert say_main(["Hi", "--out", str(out), "--voice", "nobody"]) == 2
    assert "No built-in voice 'nobody'" in capsys.readouterr().err

    # A 16 kHz WAV: the samples reach Whisper as mlx-whisper's own ffmpeg reader gives them.
    samples = np.random.default_rng(3).standard_normal(16_000 * 2).astype(np.float32) * 0.2
    wav = tmp_path / "noise.wav"
    with wave.open(str(wav), "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(16_000)
        file.writeframes((samples * 32767).astype("<i2").tobytes())
    data = tmp_path / "data"
    argv = [
        str(wav),
        "--model",
        str(tiny_whisper_path),
        "--language",
        "en",
        "--data-dir",
        str(data),
    ]
    assert transcribe_main([*argv, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    with wave.open(str(wav), "rb") as file:
        pcm = np.frombuffer(file.readframes(file.getnframes()), "<i2")
    sys.modules["mlx_whisper.transcribe"].ModelHolder.model = None
    theirs = mlx_whisper().transcribe(
        pcm.astype(np.float32) / 32768.0,
        path_or_hf_repo=str(tiny_whisper_path),
        temperature=0.0,
        fp16=uses_fp16(),
        language="en",
    )
    assert printed["text"] == theirs["text"].strip()
    assert printed["language"] == "en" and printed["seconds"] == 2.0
    assert [s["text"] for s in printed["segments"]] == [
        s["text"].strip() for s in theirs["segments"]
    ]
    assert transcribe_main([str(tmp_path / "gone.mp3"), "--data-dir", str(data)]) == 2
    assert "No speech model yet" in capsys.readouterr().err
