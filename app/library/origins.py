"""Where each library entry came from, as an `origin` key in its branchwise.json, so the same
model is recognised when it is found or added again: `folder:<resolved path>` for a folder used
in place, `gguf:<size>:<digest of its first and last MiB>` for an imported GGUF (the same file
as an Ollama blob and as an LM Studio download is one model)."""

from __future__ import annotations

from pathlib import Path

from app.library.entry_metadata import read_metadata

ORIGIN_KEY = "origin"


def library_origins(models_dir: Path) -> dict[str, str]:
    """origin -> entry id, for every entry that records one."""
    origins: dict[str, str] = {}
    if not models_dir.is_dir():
        return origins
    for folder in sorted(models_dir.iterdir()):
        if folder.name.startswith(".") or not folder.is_dir():
            continue
        origin = read_metadata(folder).get(ORIGIN_KEY)
        if isinstance(origin, str) and origin:
            origins.setdefault(origin, folder.name)
    return origins
