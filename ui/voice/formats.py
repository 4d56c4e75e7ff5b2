"""The one audio format voice uses between Qt and the rest: mono 16-bit PCM."""

from __future__ import annotations

from PySide6.QtMultimedia import QAudioFormat


def mono16(rate: int) -> QAudioFormat:
    """Mono 16-bit signed PCM at `rate` Hz."""
    fmt = QAudioFormat()
    fmt.setSampleRate(rate)
    fmt.setChannelCount(1)
    fmt.setSampleFormat(QAudioFormat.SampleFormat.Int16)
    return fmt
