"""Whisper through inference.speech: the same text as mlx-whisper's own transcribe, whole
recordings of any length, a cancel between windows, and folders refused before MLX reads them."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from inference.errors import ModelLoadError, PromptError
from inference.speech.support import is_speech_config, speech_config_problem
from inference.speech.transcription import (
    SpeechModels,
    TranscriptionCancelled,
    pcm16_samples,
    transcribe,
)
from inference.speech.whisper import check_speech_folder, mlx_whisper, uses_fp16
from tests.tiny_whisper import TINY_DIMENSIONS, spoken

SENTENCE = "Please summarize the last three messages."


def _reference(folder: Path, samples: np.ndarray, **options: object) -> dict[str, Any]:
    """mlx-whisper's own transcribe, its model loaded afresh from the folder."""
    package = mlx_whisper()
    sys.modules["mlx_whisper.transcribe"].ModelHolder.model = None
    return package.transcribe(
        samples, path_or_hf_repo=str(folder), temperature=0.0, fp16=uses_fp16(), **options
    )


@pytest.fixture(scope="module")
def models() -> SpeechModels:
    return SpeechModels()


def test_real_tiny_en_hears_the_built_in_voice_word_for_word(
    tiny_en_path: Path, models: SpeechModels
) -> None:
    samples = pcm16_samples(spoken(SENTENCE))
    transcript = transcribe(models.get(tiny_en_path), samples)
    assert transcript.text == SENTENCE
    assert transcript.language == "en"
    assert transcript.seconds == pytest.approx(len(samples) / 16_000, abs=1e-3)
    assert [s.text for s in transcript.segments] == [SENTENCE]
    models.release()


def test_the_text_is_mlx_whispers_own(tiny_whisper_path: Path, models: SpeechModels) -> None:
    rng = np.random.default_rng(1)
    samples = (rng.standard_normal(16_000 * 3) * 0.1).astype(np.float32)
    ours = transcribe(models.get(tiny_whisper_path), samples, language="de")
    theirs = _reference(tiny_whisper_path, samples, language="de")
    assert ours.text == str(theirs["text"]).strip()
    assert ours.language == "de"
    assert [s.start for s in ours.segments] == [s["start"] for s in theirs["segments"]]


def test_a_recording_longer_than_a_window_is_cancelled_between_windows(
    tiny_whisper_path: Path, models: SpeechModels
) -> None:
    samples = np.zeros(16_000 * 70, np.float32)  # three 30-second windows

    class SetAfterFirstLook(threading.Event):
        looks = 0

        def is_set(self) -> bool:
            self.looks += 1
            return self.looks > 1

    cancel = SetAfterFirstLook()
    with pytest.raises(TranscriptionCancelled):
        transcribe(models.get(tiny_whisper_path), samples, language="en", cancel=cancel)
    assert cancel.looks == 2  # one window decoded, stopped before the second
    # The model is usable afterwards, and decodes as its class does again.
    assert "decode" not in vars(models.get(tiny_whisper_path).model)


def test_audio_it_cannot_take_is_refused_in_words(
    tiny_whisper_path: Path, models: SpeechModels
) -> None:
    model = models.get(tiny_whisper_path)
    with pytest.raises(PromptError, match="empty"):
        transcribe(model, np.zeros(0, np.float32))
    with pytest.raises(PromptError, match="language code 'xx'"):
        transcribe(model, np.zeros(16_000, np.float32), language="xx")
    with pytest.raises(PromptError, match="cut in half"):
        pcm16_samples(b"\x00\x01\x02")


def test_an_english_only_model_refuses_another_language(
    tiny_en_path: Path, models: SpeechModels
) -> None:
    model = models.get(tiny_en_path)
    with pytest.raises(PromptError, match="English only"):
        transcribe(model, np.zeros(16_000, np.float32), language="fr")
    models.release()


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for path in src.iterdir():
        (dst / path.name).write_bytes(path.read_bytes())
    return dst


def test_folders_are_checked_before_mlx_reads_them(tiny_whisper_path: Path, tmp_path: Path) -> None:
    config = json.loads((tiny_whisper_path / "config.json").read_text())
    assert is_speech_config(config) and speech_config_problem(config) is None
    assert is_speech_config({k: v for k, v in config.items() if k != "model_type"})
    assert not is_speech_config({"model_type": "llama", **TINY_DIMENSIONS})

    npz = _copy(tiny_whisper_path, tmp_path / "npz")
    (npz / "weights.safetensors").rename(npz / "weights.npz")
    with pytest.raises(ModelLoadError, match="NumPy archive"):
        check_speech_folder(npz)

    cut = _copy(tiny_whisper_path, tmp_path / "cut")
    data = (cut / "weights.safetensors").read_bytes()
    (cut / "weights.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelLoadError, match="damaged or incomplete"):
        check_speech_folder(cut)

    wide = _copy(tiny_whisper_path, tmp_path / "wide")
    (wide / "config.json").write_text(json.dumps({**config, "n_text_layer": 10**9}))
    with pytest.raises(ModelLoadError):
        check_speech_folder(wide)
    with pytest.raises(ModelLoadError, match="not a folder"):
        check_speech_folder(tmp_path / "gone")
