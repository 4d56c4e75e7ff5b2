"""A recording from the default microphone, as 16 kHz mono 16-bit PCM (what Whisper reads),
with its level and length while it runs.

Qt's `QAudioSource` is asked for 16 kHz mono; a device that cannot give it records at its own
preferred rate and channels and the recording is converted when it ends
(`app.voice.samples.resampled`). The input is read every 50 ms (pull mode), so the meter moves
smoothly and nothing piles up. While muted (a voice conversation reading its reply aloud) what
the microphone hears is dropped, so the reply's own audio never becomes the person's words.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from PySide6.QtCore import QIODevice, QObject, QTimer, Signal, Slot
from PySide6.QtMultimedia import QAudioFormat, QAudioSource, QMediaDevices, QtAudio

from app.voice.samples import SILENCE_DB, level_db, pcm16, resampled, samples16
from ui.voice.formats import mono16

WHISPER_RATE = 16_000
READ_EVERY_MS = 50


@dataclass(frozen=True, slots=True)
class RecordingLevel:
    level_db: float  # the last 50 ms, in dBFS (SILENCE_DB while muted)
    seconds: float  # recorded so far
    chunk_s: float  # how much audio the level covers


class Recorder(QObject):
    """`start()`, then `stop()` for the PCM, or `cancel()`; `levelChanged` every 50 ms."""

    levelChanged = Signal(RecordingLevel)
    failed = Signal(str)  # the microphone stopped with an error, said for the person

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._source: QAudioSource | None = None
        self._io: QIODevice | None = None
        self._format = mono16(WHISPER_RATE)
        self._chunks: list[bytes] = []
        self._bytes = 0
        self._muted = False
        self._started = 0.0
        self._timer = QTimer(self)
        self._timer.setInterval(READ_EVERY_MS)
        self._timer.timeout.connect(self._read)

    @property
    def recording(self) -> bool:
        return self._source is not None

    def start(self) -> str | None:
        """Start recording from the default input; the reason when it cannot."""
        if self._source is not None:
            return None
        device = QMediaDevices.defaultAudioInput()
        if device.isNull():
            return "No microphone: connect one (or turn one on) to dictate."
        fmt = mono16(WHISPER_RATE)
        if not device.isFormatSupported(fmt):
            fmt = device.preferredFormat()
            fmt.setSampleFormat(QAudioFormat.SampleFormat.Int16)
        self._format = fmt
        source = QAudioSource(device, fmt, self)
        # Half a second of room: a busy GUI thread must not make the device drop audio.
        source.setBufferSize(fmt.bytesForDuration(500_000))
        io = source.start()
        if io is None or source.error() != QtAudio.Error.NoError:
            source.deleteLater()
            return f"The microphone ({device.description()}) could not be opened."
        self._source, self._io = source, io
        io.readyRead.connect(self._read)  # as soon as audio arrives; the timer paces the meter
        self._chunks, self._bytes, self._started = [], 0, time.monotonic()
        self._timer.start()
        return None

    def set_muted(self, muted: bool) -> None:
        """Drop what the microphone hears (the reply's own voice) until unmuted."""
        self._muted = muted

    def seconds(self) -> float:
        frame = 2 * max(1, self._format.channelCount())
        return self._bytes / frame / max(1, self._format.sampleRate())

    def stop(self) -> bytes:
        """End the recording: everything heard (not muted), as 16 kHz mono 16-bit PCM."""
        if self._source is None:
            return b""
        self._read(final=True)
        self._close()
        pcm = b"".join(self._chunks)
        self._chunks = []
        rate, channels = self._format.sampleRate(), self._format.channelCount()
        if rate == WHISPER_RATE and channels == 1:
            return pcm
        return pcm16(resampled(samples16(pcm, channels), rate, WHISPER_RATE))

    def cancel(self) -> None:
        self._close()
        self._chunks = []

    def _close(self) -> None:
        self._timer.stop()
        if self._source is not None:
            self._source.stop()
            self._source.deleteLater()
        self._source = self._io = None

    @Slot()
    def _read(self, final: bool = False) -> None:
        """Take what the device has; `final`: the last read of `stop`, which tells no level
        (a listener could otherwise stop the recording again from inside `stop`)."""
        if self._io is None or self._source is None:
            return
        data = self._io.readAll().data()
        if self._source.error() not in (QtAudio.Error.NoError, QtAudio.Error.UnderrunError):
            self._close()
            self.failed.emit("The microphone stopped working (was it unplugged?).")
            return
        if not data:
            return
        chunk = bytes(data)
        frame = 2 * max(1, self._format.channelCount())
        chunk_s = len(chunk) / frame / max(1, self._format.sampleRate())
        if self._muted:
            level = SILENCE_DB
        else:
            self._chunks.append(chunk)
            self._bytes += len(chunk)
            level = level_db(chunk)
        if not final:
            self.levelChanged.emit(RecordingLevel(level, self.seconds(), chunk_s))
