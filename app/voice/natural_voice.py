"""The built-in natural voice: hibari-tts (Apache-2.0), a 7.9 MB ONNX voice inside the package,
run by onnxruntime on the CPU (no MLX, so never on the inference worker), about 100x faster than
real time on one core. Only the voices already on this computer are offered: hibari's others
would be downloaded on first use, and Branchwise works offline.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

SAMPLE_RATE = 24_000  # hibari's
DEFAULT_VOICE = "heart"


@dataclass(frozen=True, slots=True)
class NaturalVoiceInfo:
    name: str
    description: str  # "American English, female"


def natural_voices() -> list[NaturalVoiceInfo]:
    """hibari's voices that need no download."""
    import os

    from hibari import voices

    found = []
    for name, facts in voices.VOICES.items():
        here = facts.get("bundled") or os.path.exists(
            os.path.join(voices.cache_dir(), facts["file"])
        )
        if here:
            accent = f"{facts.get('accent', '')} English".strip()
            found.append(NaturalVoiceInfo(name, f"{accent}, {facts.get('gender', '')}".strip(", ")))
    return found


class NaturalVoice:
    """One hibari voice, loaded on first use; `speak` may be called from any one thread at a
    time (a lock keeps a second caller waiting)."""

    def __init__(self, voice: str = DEFAULT_VOICE) -> None:
        self.voice = voice
        self._engine: Any = None
        self._lock = threading.Lock()

    def speak(self, text: str, speed: float = 1.0) -> bytes:
        """`text` said at `speed` (0.5 to 2), as 16-bit mono PCM at SAMPLE_RATE. The same text
        gives the same audio (the voice's noise is seeded)."""
        with self._lock:
            if self._engine is None:
                from hibari import Hibari  # onnxruntime: ~0.3 s, on first use only

                if self.voice not in {v.name for v in natural_voices()}:
                    raise ValueError(
                        f"The voice '{self.voice}' is not on this computer; the built-in one "
                        f"is '{DEFAULT_VOICE}'."
                    )
                self._engine = Hibari(self.voice)
            audio = self._engine(text, speed=speed, seed=0)
        return (np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
