"""mlx-whisper is installed without its declared dependencies (Makefile): transcription must
never import torch, nor numba, llvmlite or scipy (word timestamps only), nor ffmpeg's process.
Each is blocked in a fresh interpreter, which then transcribes with a tiny Whisper."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEAVY = ("torch", "torchvision", "numba", "llvmlite", "scipy", "mlx_whisper.torch_whisper")

SCRIPT = """
import subprocess, sys
for name in {heavy!r}:
    sys.modules[name] = None  # importing it now raises ImportError
def no_process(*args, **kwargs):
    raise AssertionError(f"a process was started: {{args}}")
subprocess.run = subprocess.Popen = no_process  # mlx-whisper would start ffmpeg for a file
import numpy as np
from inference.speech.transcription import SpeechModels, transcribe
model = SpeechModels().get(__import__("pathlib").Path({folder!r}))
result = transcribe(model, np.zeros(16_000, np.float32), language="en")
assert result.language == "en" and result.seconds == 1.0, result
print("loaded", sorted(m for m, v in sys.modules.items() if v is not None))
"""


def test_transcription_needs_none_of_mlx_whispers_heavy_dependencies(
    tiny_whisper_path: Path,
) -> None:
    root = Path(__file__).resolve().parents[3]
    code = SCRIPT.format(heavy=HEAVY, folder=str(tiny_whisper_path))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = done.stdout.split("loaded", 1)[1]
    assert "'mlx_whisper.transcribe'" in loaded  # the positive control: it did transcribe
    assert not [name for name in HEAVY if f"'{name}'" in loaded or f"'{name}." in loaded]
