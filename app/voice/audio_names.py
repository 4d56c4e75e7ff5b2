"""Which files are audio to transcribe, by name (the composer's attach and drop sort them)."""

from __future__ import annotations

from pathlib import Path

AUDIO_SUFFIXES = frozenset({".wav", ".mp3", ".m4a", ".aac", ".flac", ".ogg", ".oga", ".opus"})
AUDIO_PATTERNS = " ".join(f"*{suffix}" for suffix in sorted(AUDIO_SUFFIXES))


def is_audio_path(path: str | Path) -> bool:
    return Path(path).suffix.lower() in AUDIO_SUFFIXES
