"""The model the benchmarks run by default: SmolLM2-135M-Instruct, imported once from the GGUF
embedded with the app into a folder under the system temp dir, or the tiny random-weight llama
fixture where that GGUF or the importer is missing."""

from __future__ import annotations

import tempfile
from pathlib import Path

import inference
from app.library.embedded_model import embedded_gguf_path

WORKDIR = Path(tempfile.gettempdir()) / "branchwise-bench"


def default_model(workdir: Path = WORKDIR) -> Path:
    """SmolLM2 imported from its GGUF when possible, else the tiny llama fixture."""
    models = workdir / "smollm2"  # kept between runs: the import takes a while
    done = [p for p in models.glob("*") if (p / "config.json").is_file()]
    if done:
        return done[0]
    gguf = embedded_gguf_path()
    if gguf is not None and getattr(inference, "import_gguf", None) is not None:
        print(f"importing {gguf.name} into {models} ...", flush=True)
        return inference.import_gguf(gguf, models)
    from tests.tiny_models import build_model

    print("the embedded SmolLM2 GGUF or the GGUF importer is missing: using the tiny llama fixture")
    return build_model("llama", workdir / "tiny-llama")
