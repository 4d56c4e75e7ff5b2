"""Audio files (WAV, MP3, M4A, FLAC, OGG...) decoded into 16 kHz mono 16-bit PCM by Qt's own
decoder: the FFmpeg inside PySide6-Addons (LGPL), so no system ffmpeg is needed.

A person's file is untrusted input: its size is checked before FFmpeg opens it, and decoding
stops once more audio came out than `MAX_SECONDS` (a file that claims little and decodes to
hours). A 16 kHz mono 16-bit WAV is read by Python's own `wave` module instead: exactly the
samples in the file, as mlx-whisper's ffmpeg reader would give them.
"""

from __future__ import annotations

import wave
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QEventLoop, QObject, QTimer, QUrl, Signal, Slot
from PySide6.QtMultimedia import QAudioDecoder

from ui.voice.formats import mono16

MAX_FILE_BYTES = 2 * 1024**3
MAX_SECONDS = 4 * 3600  # inference.speech.transcription.MAX_SECONDS
RATE = 16_000


class AudioFileError(Exception):
    """A file that cannot be decoded; the message is for the person."""


@dataclass(frozen=True, slots=True)
class DecodedAudio:
    path: str
    pcm: bytes  # 16 kHz mono 16-bit
    seconds: float


def check_audio_file(path: Path) -> None:
    """Refuse what is no file, empty, or too large, before a decoder reads it."""
    if not path.is_file():
        raise AudioFileError(f"{path.name} is not a file (was it moved?).")
    size = path.stat().st_size
    if size == 0:
        raise AudioFileError(f"{path.name} is empty.")
    if size > MAX_FILE_BYTES:
        raise AudioFileError(
            f"{path.name} is {size / 1024**3:.1f} GB; Branchwise transcribes files up to 2 GB."
        )


def _plain_wav(path: Path) -> bytes | None:
    """The samples of a 16 kHz mono 16-bit PCM WAV, else None (another decoder's job)."""
    try:
        with wave.open(str(path), "rb") as file:
            if (file.getframerate(), file.getnchannels(), file.getsampwidth()) != (RATE, 1, 2):
                return None
            return file.readframes(min(file.getnframes(), MAX_SECONDS * RATE))
    except (wave.Error, EOFError):
        return None


class AudioFileDecoder(QObject):
    """Decodes one file at a time on Qt's decoder thread; `decoded` or `failed` at the end."""

    decoded = Signal(DecodedAudio)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._decoder: QAudioDecoder | None = None
        self._path = Path()
        self._chunks: list[bytes] = []
        self._bytes = 0

    def start(self, path: str | Path) -> None:
        self.cancel()
        self._path = Path(path)
        try:
            check_audio_file(self._path)
        except AudioFileError as error:
            message = str(error)
            QTimer.singleShot(0, lambda: self.failed.emit(message))
            return
        plain = _plain_wav(self._path)
        if plain is not None:
            audio = DecodedAudio(str(self._path), plain, len(plain) / 2 / RATE)
            QTimer.singleShot(0, lambda: self.decoded.emit(audio))
            return
        decoder = QAudioDecoder(self)
        decoder.setAudioFormat(mono16(RATE))
        decoder.setSource(QUrl.fromLocalFile(str(self._path)))
        decoder.bufferReady.connect(self._on_buffer)
        decoder.finished.connect(self._on_finished)
        decoder.error.connect(self._on_error)
        self._decoder, self._chunks, self._bytes = decoder, [], 0
        decoder.start()

    def cancel(self) -> None:
        decoder, self._decoder = self._decoder, None  # stop() may emit finished at once
        if decoder is not None:
            decoder.blockSignals(True)
            decoder.stop()
            decoder.deleteLater()

    @Slot()
    def _on_buffer(self) -> None:
        if self._decoder is None:
            return
        buffer = self._decoder.read()
        data = bytes(buffer.data())
        self._chunks.append(data)
        self._bytes += len(data)
        if self._bytes > MAX_SECONDS * RATE * 2:
            self.cancel()
            self.failed.emit(
                f"{self._path.name} holds more than {MAX_SECONDS // 3600} hours of audio; "
                "Branchwise transcribes up to that much at a time."
            )

    @Slot()
    def _on_finished(self) -> None:
        self.cancel()
        pcm = b"".join(self._chunks)
        self._chunks = []
        if not pcm:
            self.failed.emit(f"{self._path.name} holds no audio Branchwise can read.")
            return
        self.decoded.emit(DecodedAudio(str(self._path), pcm, len(pcm) / 2 / RATE))

    @Slot()
    def _on_error(self) -> None:
        decoder = self._decoder
        reason = decoder.errorString() if decoder is not None else ""
        self.cancel()
        self.failed.emit(
            f"{self._path.name} could not be decoded as audio"
            + (f" ({reason})." if reason else ".")
        )


def decode_audio_file(path: str | Path, timeout_s: float = 600.0) -> DecodedAudio:
    """Decode `path`, waiting for it in a local event loop (for `branchwise transcribe`, which
    has a QCoreApplication and nothing else to do meanwhile). Raises AudioFileError."""
    decoder = AudioFileDecoder()
    loop = QEventLoop()
    outcome: list[DecodedAudio | str] = []
    decoder.decoded.connect(lambda audio: (outcome.append(audio), loop.quit()))
    decoder.failed.connect(lambda message: (outcome.append(message), loop.quit()))
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    decoder.start(path)
    if not outcome:
        loop.exec()
    decoder.cancel()
    if not outcome:
        raise AudioFileError(f"Decoding {Path(path).name} took longer than {timeout_s:.0f} s.")
    if isinstance(outcome[0], str):
        raise AudioFileError(outcome[0])
    return outcome[0]
