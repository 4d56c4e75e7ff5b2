"""A recording transcribed by Whisper on the inference worker, whole however long it is
(mlx-whisper slides its 30-second window over it), cancellable between windows.

Audio arrives as 16 kHz mono samples: 16-bit PCM bytes from the microphone or a decoded file
(`pcm16_samples`, scaled as mlx-whisper's own ffmpeg reader scales them), so mlx-whisper never
runs ffmpeg. Decoding is greedy (temperature 0, no fallback to sampling): the same audio gives
the same text, and it equals `mlx_whisper.transcribe(samples, path_or_hf_repo=folder,
temperature=0.0, fp16=uses_fp16())`.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from inference.errors import InferenceError, PromptError
from inference.speech.whisper import SpeechModel, load_speech_model, mlx_whisper

SAMPLE_RATE = 16_000
# Four hours: longer is not a recording a person dictates or attaches to a message.
MAX_SECONDS = 4 * 3600


class TranscriptionCancelled(InferenceError):
    """The person stopped the transcription; nothing was transcribed."""


@dataclass(frozen=True, slots=True)
class Segment:
    start: float  # seconds from the start of the audio
    end: float
    text: str


@dataclass(frozen=True, slots=True)
class Transcript:
    text: str  # the whole transcript, without Whisper's leading space
    language: str  # the language spoken (detected, or the one asked for)
    seconds: float  # the audio's length
    segments: tuple[Segment, ...]


def pcm16_samples(pcm: bytes) -> np.ndarray:
    """16-bit little-endian PCM as float32 samples in [-1, 1), as mlx-whisper reads ffmpeg's."""
    if len(pcm) % 2:
        raise PromptError("The recording is damaged: its last sample is cut in half.")
    return np.frombuffer(pcm, "<i2").astype(np.float32) / 32768.0


class SpeechModels:
    """The one Whisper model kept loaded on the worker (a second folder replaces it)."""

    def __init__(self) -> None:
        self._held: SpeechModel | None = None

    def get(self, folder: Path) -> SpeechModel:
        if self._held is None or self._held.folder != folder:
            self._held = None  # the old one's memory goes before the new one loads
            self._held = load_speech_model(folder)
        return self._held

    def release(self) -> None:
        self._held = None


def transcribe(
    model: SpeechModel,
    samples: np.ndarray,
    language: str | None = None,
    cancel: threading.Event | None = None,
) -> Transcript:
    """Whisper's transcript of 16 kHz mono float32 `samples`; `language` is a code ("en",
    "de"...) or None to detect it. Raises PromptError for audio it cannot take, and
    TranscriptionCancelled once `cancel` is set (checked before each 30-second window)."""
    seconds = len(samples) / SAMPLE_RATE
    if seconds > MAX_SECONDS:
        raise PromptError(
            f"The audio is {seconds / 3600:.1f} hours long; Branchwise transcribes up to "
            f"{MAX_SECONDS // 3600} hours at a time."
        )
    if not len(samples):
        raise PromptError("The recording is empty: nothing was heard.")
    if language and not model.multilingual and language != "en":
        raise PromptError(
            f"{model.folder.name} understands English only; choose a multilingual Whisper "
            "model for other languages."
        )
    package = mlx_whisper()
    _check_language(package, language)
    holder = sys.modules["mlx_whisper.transcribe"].ModelHolder
    holder.model, holder.model_path = model.model, str(model.folder)
    model.model.decode = _checked_decode(package, model.model, cancel)
    try:
        result: dict[str, Any] = package.transcribe(
            samples.astype(np.float32, copy=False),
            path_or_hf_repo=str(model.folder),
            temperature=0.0,
            fp16=model.fp16,
            language=language or None,
        )
    finally:
        del model.model.decode  # the class's own again
        holder.model = holder.model_path = None  # the worker's SpeechModels owns it
    return Transcript(
        text=str(result["text"]).strip(),
        language=str(result["language"]),
        seconds=round(seconds, 3),
        segments=tuple(
            Segment(float(s["start"]), float(s["end"]), str(s["text"]).strip())
            for s in result["segments"]
        ),
    )


def _checked_decode(
    package: Any, whisper: Any, cancel: threading.Event | None
) -> Callable[[Any, Any], Any]:
    """`whisper.decode`, looking at `cancel` first: mlx-whisper decodes each 30-second window
    with one call and offers no other place to stop."""
    decode = package.decoding.decode

    def checked(segment: Any, options: Any) -> Any:
        if cancel is not None and cancel.is_set():
            raise TranscriptionCancelled("Transcription stopped.")
        return decode(whisper, segment, options)

    return checked


def _check_language(package: Any, language: str | None) -> None:
    if language and language not in package.tokenizer.LANGUAGES:
        raise PromptError(f"Whisper does not know the language code '{language}'.")
