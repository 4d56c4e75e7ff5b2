"""16-bit mono PCM played through the default output, in the order it is queued: the built-in
voice's sentences, each queued as it is synthesized, so the first is heard while the next are
still being made.

Qt's `QAudioSink` in push mode, fed every 20 ms with as much as it has room for. A device that
does not take the voice's rate gets the audio converted to its own.
"""

from __future__ import annotations

import time
from collections import deque

from PySide6.QtCore import QIODevice, QObject, QTimer, Signal, Slot
from PySide6.QtMultimedia import QAudioSink, QMediaDevices, QtAudio

from app.voice.samples import pcm16, resampled, samples16
from ui.voice.formats import mono16

FEED_EVERY_MS = 20
BUFFER_US = 150_000


class PcmPlayer(QObject):
    """`play(pcm)` queues audio; `pause`, `resume`, `stop`. `idle` fires when everything
    queued has been heard; `firstSound` when a quiet player hands its first audio to the output
    (the seconds since the `play` that started it; the device's own latency, tens of ms on a
    Mac's speakers, comes on top: Qt reports a PulseAudio null sink's progress only every 2 s,
    so the time the output says it played cannot be used)."""

    idle = Signal()
    firstSound = Signal(float)
    failed = Signal(str)

    def __init__(self, sample_rate: int, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rate = sample_rate
        self._sink: QAudioSink | None = None
        self._io: QIODevice | None = None
        self._device_rate = sample_rate
        self._queue: deque[bytes] = deque()
        self._paused = False
        self._asked_at: float | None = None  # when the audio now waiting was asked for
        self._sounding = False
        self._timer = QTimer(self)
        self._timer.setInterval(FEED_EVERY_MS)
        self._timer.timeout.connect(self._feed)

    @property
    def active(self) -> bool:
        """Something is queued or still sounding."""
        return self._sink is not None

    @property
    def paused(self) -> bool:
        return self._paused

    def play(self, pcm: bytes) -> bool:
        """Queue `pcm`; False (and `failed`) when there is no output to play it on."""
        if self._sink is None and not self._open():
            return False
        if self._device_rate != self._rate:
            pcm = pcm16(resampled(samples16(pcm), self._rate, self._device_rate))
        self._queue.append(pcm)
        if self._asked_at is None and not self._sounding:
            self._asked_at = time.perf_counter()
        self._feed()
        return True

    def pause(self) -> None:
        if self._sink is not None and not self._paused:
            self._paused = True
            self._sink.suspend()

    def resume(self) -> None:
        if self._sink is not None and self._paused:
            self._paused = False
            self._sink.resume()

    def stop(self) -> None:
        self._queue.clear()
        self._close()

    def _open(self) -> bool:
        device = QMediaDevices.defaultAudioOutput()
        if device.isNull():
            self.failed.emit("No audio output: connect speakers or headphones to hear replies.")
            return False
        fmt = mono16(self._rate)
        if not device.isFormatSupported(fmt):
            fmt.setSampleRate(device.preferredFormat().sampleRate())
        self._device_rate = fmt.sampleRate()
        sink = QAudioSink(device, fmt, self)
        # A short buffer: the server's default (about 2 s on PulseAudio) would be heard as
        # that much silence before each reply's first sentence.
        sink.setBufferSize(fmt.bytesForDuration(BUFFER_US))
        io = sink.start()
        if io is None or sink.error() != QtAudio.Error.NoError:
            sink.deleteLater()
            self.failed.emit(f"The audio output ({device.description()}) could not be opened.")
            return False
        self._sink, self._io, self._paused = sink, io, False
        self._timer.start()
        return True

    def _close(self) -> None:
        self._timer.stop()
        if self._sink is not None:
            self._sink.stop()
            self._sink.deleteLater()
        self._sink = self._io = None
        self._paused = self._sounding = False
        self._asked_at = None

    @Slot()
    def _feed(self) -> None:
        sink, io = self._sink, self._io
        if sink is None or io is None or self._paused:
            return
        wrote = 0
        while self._queue and sink.bytesFree() > 0:
            head = self._queue.popleft()
            room = sink.bytesFree() // 2 * 2
            written = io.write(head[:room])
            wrote += max(0, written)
            if written < len(head):
                self._queue.appendleft(head[max(0, written) :])
                break
        if self._asked_at is not None and wrote > 0:
            self.firstSound.emit(time.perf_counter() - self._asked_at)
            self._asked_at, self._sounding = None, True
        ran_dry = sink.state() == QtAudio.State.IdleState and sink.processedUSecs() > 0
        if not self._queue and self._sounding and ran_dry:
            self._close()  # all of it heard: the sink played and ran dry
            self.idle.emit()
