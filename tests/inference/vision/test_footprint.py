"""mlx-vlm is installed without its declared dependencies (Makefile): image chat must never
import its video, audio, training or server packages, nor torch. Each is blocked in a fresh
interpreter, which then loads a tiny vision model and answers about an image."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEAVY = (
    "cv2",
    "torch",
    "torchvision",
    "datasets",
    "pyarrow",
    "pandas",
    "scipy",
    "mlx_audio",
    "sounddevice",
    "miniaudio",
    "llguidance",
    "fastapi",
    "starlette",
    "uvicorn",
    "websockets",
    "multipart",
    "gradio",
)

SCRIPT = """
import sys
for name in {heavy!r}:
    sys.modules[name] = None  # importing it now raises ImportError
from inference import Engine, SamplingParams, load_model
from tests.tiny_vision import png_bytes
loaded = load_model({folder!r})
assert loaded.vision is not None
parts = [{{"type": "image", "image": png_bytes(40, 30, 1)}}, {{"type": "text", "text": "Hi"}}]
result = Engine(loaded).generate([{{"role": "user", "content": parts}}],
                                 SamplingParams(max_tokens=3))
assert result.stats.prompt_tokens > 20, result.stats
print("loaded", sorted({{m.split(".")[0] for m, v in sys.modules.items() if v is not None}}))
"""


def test_image_chat_needs_none_of_mlx_vlms_heavy_dependencies(tiny_vision_dir: Path) -> None:
    root = Path(__file__).resolve().parents[3]
    for kind in ("smolvlm", "qwen2_5_vl"):
        code = SCRIPT.format(heavy=HEAVY, folder=str(tiny_vision_dir / kind))
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=300
        )
        assert done.returncode == 0, done.stderr[-3000:]
        loaded = done.stdout.split("loaded", 1)[1]
        assert not [name for name in HEAVY if f"'{name}'" in loaded]
