"""Audio samples on their way between a device and Whisper (16 kHz mono 16-bit): levels,
conversions between 16-bit PCM and float samples, and a change of sample rate."""

from __future__ import annotations

import numpy as np

SILENCE_DB = -90.0  # the level of digital silence, in dBFS


def level_db(pcm: bytes) -> float:
    """The RMS level of 16-bit PCM, in dBFS (0 is full scale; SILENCE_DB for silence)."""
    samples = np.frombuffer(pcm[: len(pcm) // 2 * 2], "<i2").astype(np.float32) / 32768.0
    if not len(samples):
        return SILENCE_DB
    rms = float(np.sqrt(np.mean(samples * samples)))
    return max(SILENCE_DB, 20.0 * float(np.log10(rms))) if rms > 0 else SILENCE_DB


def resampled(samples: np.ndarray, rate: int, to_rate: int) -> np.ndarray:
    """Mono float samples at `rate` brought to `to_rate`, band-limited (by FFT, over the whole
    recording: a microphone that records only at 48 kHz, dictation at Whisper's 16 kHz)."""
    if rate == to_rate or not len(samples):
        return samples.astype(np.float32, copy=False)
    count = round(len(samples) * to_rate / rate)
    spectrum = np.fft.rfft(samples.astype(np.float64))
    bins = count // 2 + 1
    kept = spectrum[:bins] if bins <= len(spectrum) else np.pad(spectrum, (0, bins - len(spectrum)))
    return (np.fft.irfft(kept, count) * (count / len(samples))).astype(np.float32)


def pcm16(samples: np.ndarray) -> bytes:
    """Float samples in [-1, 1] as 16-bit little-endian PCM."""
    return (np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()


def samples16(pcm: bytes, channels: int = 1) -> np.ndarray:
    """16-bit PCM (interleaved when `channels` > 1) as mono float samples."""
    data = np.frombuffer(pcm[: len(pcm) // (2 * channels) * 2 * channels], "<i2")
    mono = data.reshape(-1, channels).mean(axis=1) if channels > 1 else data
    return mono.astype(np.float32) / 32768.0
