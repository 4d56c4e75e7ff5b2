"""What `branchwise --self-test` proves of voice in an installed or frozen app: Qt's audio and
text-to-speech modules load, the built-in voice speaks (its ONNX model and lexicons are there),
Qt's own FFmpeg decodes that speech from a WAV file, and Whisper transcribes it on the inference
worker (mlx-whisper's mel filters and tokenizer files are there), with a random-weight model
made on the spot (the app ships none). Returns the summary's words; raises VoiceCheckError."""

from __future__ import annotations

import tempfile
import wave
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.voice.natural_voice import SAMPLE_RATE, NaturalVoice
from app.voice.transcription import transcribe_with_random_whisper
from ui.voice.microphone import multimedia_problem

SAMPLE = "Branchwise can speak."


class VoiceCheckError(Exception):
    """A step of the voice check failed; the message says which."""


def check_voice(run_on_worker: Callable[[Callable[[], Any]], Any]) -> str:
    """`run_on_worker(fn)` runs `fn` on the inference worker and returns its result."""
    problem = multimedia_problem()
    if problem is not None:
        raise VoiceCheckError(problem)
    from PySide6.QtTextToSpeech import QTextToSpeech

    from ui.voice.audio_files import AudioFileError, decode_audio_file

    engines = QTextToSpeech.availableEngines()
    pcm = NaturalVoice().speak(SAMPLE)
    if len(pcm) < SAMPLE_RATE:  # under half a second of 16-bit audio
        raise VoiceCheckError("the built-in voice made no sound")
    with tempfile.TemporaryDirectory(prefix="branchwise-voice-") as folder:
        wav = Path(folder) / "sample.wav"
        with wave.open(str(wav), "wb") as file:
            file.setnchannels(1)
            file.setsampwidth(2)
            file.setframerate(SAMPLE_RATE)
            file.writeframes(pcm)
        try:
            decoded = decode_audio_file(wav)
        except AudioFileError as error:
            raise VoiceCheckError(f"decoding audio: {error}") from error
        transcript = run_on_worker(
            lambda: transcribe_with_random_whisper(Path(folder) / "whisper", decoded.pcm)
        )
    return (
        f"{decoded.seconds:.1f} s said, decoded and transcribed "
        f"({transcript.language}); speech engines={'/'.join(engines) or 'none'}"
    )
