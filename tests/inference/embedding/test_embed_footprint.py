"""The built-in embedder loads and embeds with numpy, safetensors and tokenizers alone: never
torch, never the `wordllama` package (whose __init__ pulls pydantic, requests and toml), and no
MLX, so it runs on any thread of the app. Checked in a fresh interpreter, torch blocked (finding
`wordllama`'s files needs its spec, so it is looked for in what got loaded instead)."""

from __future__ import annotations

import subprocess
import sys

from tests.paths import ROOT

BLOCKED = ("torch",)
NOT_LOADED = ("torch", "wordllama", "toml", "pydantic", "requests", "mlx", "mlx_lm", "PySide6")

SCRIPT = """
import sys
for name in {blocked!r}:
    sys.modules[name] = None  # importing it now raises ImportError
from app.library.embedded_model import EMBEDDER_NAME, embedded_embedder_files
from inference.embedding.static_model import load_static_embedder
files = embedded_embedder_files()
embedder = load_static_embedder(files.weights, files.tokenizer, EMBEDDER_NAME)
vectors = embedder.embed_documents(["a knowledge folder", "of documents"])
assert vectors.shape == (2, 256), vectors.shape
print("loaded", sorted({{m.split(".")[0] for m, v in sys.modules.items() if v is not None}}))
"""


def test_the_builtin_embedder_needs_no_torch_no_wordllama_and_no_mlx() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(blocked=BLOCKED)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = done.stdout.split("loaded", 1)[1]
    assert "'numpy'" in loaded and "'tokenizers'" in loaded  # the check sees what was loaded
    assert [name for name in NOT_LOADED if f"'{name}'" in loaded] == []
