"""Dictation's transcription as an operation on the inference worker: the one thread that runs
MLX, so a transcription waits for a reply being generated and never runs beside it. Cancelling
stops it before its next 30-second window. The worker keeps the last Whisper model loaded, so a
second dictation starts at once.

`transcribe_pcm` is the same work done in the calling thread, for `branchwise transcribe`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from app.operations.operation import EngineQueue, JobContext, Operation, on_worker

if TYPE_CHECKING:
    from inference.speech.transcription import SpeechModels, Transcript

_held: list[SpeechModels] = []  # the worker's (made there, on first use)


def _models() -> SpeechModels:
    from inference.speech.transcription import SpeechModels

    if not _held:
        _held.append(SpeechModels())
    return _held[0]


def _refusals() -> tuple[type[BaseException], ...]:
    """inference's errors, once the job has loaded inference (on the worker thread)."""
    from inference.errors import InferenceError

    return (InferenceError, OSError)


def transcribe_pcm(
    folder: Path, pcm: bytes, language: str | None = None, cancel: Any = None
) -> Transcript:
    """16 kHz mono 16-bit PCM transcribed by the Whisper model in `folder` (loaded once and
    kept). Runs MLX: the inference worker, or a command's own process."""
    from inference.speech.transcription import pcm16_samples, transcribe

    return transcribe(_models().get(folder), pcm16_samples(pcm), language or None, cancel)


def transcribe_with_random_whisper(folder: Path, pcm: bytes) -> Transcript:
    """Build a random-weight Whisper in `folder` and transcribe `pcm` with it: the whole path
    runs, the words mean nothing (`branchwise --self-test`). Worker thread."""
    from inference.speech.random_whisper import build_random_whisper
    from inference.speech.transcription import SpeechModels, pcm16_samples, transcribe

    model = SpeechModels().get(build_random_whisper(folder))
    return transcribe(model, pcm16_samples(pcm), "en")


def release_speech_model() -> None:
    """Let the Whisper model's memory go (on the worker thread)."""
    if _held:
        _held[0].release()


class _Refusal(Exception):
    """inference's refusal, as the operation's expected error (its message kept)."""


def transcription(
    owner: QObject, worker: EngineQueue, folder: Path, pcm: bytes, language: str | None
) -> Operation[Transcript, None]:
    """Transcribe `pcm` (16 kHz mono 16-bit) on the worker; the failure's message says why
    (no model, a damaged one, an empty recording); cancel stops it between windows."""

    def job(context: JobContext[None]) -> Transcript:
        try:
            return transcribe_pcm(folder, pcm, language, context.cancel_event)
        except _refusals() as error:
            raise _Refusal(str(error)) from error

    return Operation(owner, "Transcribing", job, expected=(_Refusal,), runs_on=on_worker(worker))
