"""Whether mlx-lm (or Branchwise's own model registry) has code for an entry's model type.

Answering that means importing mlx-lm, which loads MLX and takes seconds. The app must not do it
at import time, and the GUI thread must never do it, yet the GUI thread lists the library. So the
question is answered where a model is added (a folder import or a download, on a background
thread; a GGUF import, on the inference worker) and, for entries whose answer is missing or was
given by another mlx-lm version, by `refresh_support` on the inference worker at start-up. The
answer is kept in the entry's branchwise.json with the mlx-lm version and model type it holds
for, and the list reads it back; the version comes from the package metadata, which is cheap.
An entry with no answer yet lists as loadable, and loading it still fails with a clear
ModelLoadError if its type is unknown. Asking mlx-lm at list time instead would have meant
either importing it on the GUI thread or parsing its source, which the frozen app does not ship.
"""

from __future__ import annotations

import functools
from importlib import metadata
from pathlib import Path
from typing import Any

from app.library.entry_metadata import read_metadata, write_metadata
from app.library.model_check import LibraryError, check_config
from inference.embedding.folder import ENCODER_TYPES, is_embedding_folder

SUPPORT_KEY = "mlx_lm_support"


def check_supported(config: dict[str, Any], embedding: bool = False) -> dict[str, Any]:
    """Refuse a model type no code knows, with the message loading it would give; return the
    answer to keep in the entry's branchwise.json under SUPPORT_KEY.

    Imports mlx-lm (so MLX): call it off the GUI thread."""
    record = _support_record(config, embedding)
    if record["problem"] is not None:
        raise LibraryError(record["problem"])
    return record


def recorded_problem(meta: dict[str, Any], config: dict[str, Any]) -> str | None:
    """The recorded reason the entry's model type cannot load, if one was recorded by this
    mlx-lm version for this model type (a linked folder's config can change). No import."""
    record = meta.get(SUPPORT_KEY)
    if not isinstance(record, dict) or not _is_current(record, config):
        return None
    problem = record.get("problem")
    return problem if isinstance(problem, str) else None


def refresh_support(models_dir: str | Path) -> None:
    """Record the answer for every entry without a current one (one added by an older
    Branchwise, or before mlx-lm was upgraded). Imports mlx-lm: the inference worker's job."""
    models = Path(models_dir)
    if not models.is_dir():
        return
    for folder in models.iterdir():
        if folder.name.startswith(".") or not folder.is_dir() or folder.is_symlink():
            continue
        meta = read_metadata(folder)
        path = Path(meta["linked_path"]) if meta.get("linked_path") else folder
        try:
            config = check_config(path)
        except LibraryError:
            continue  # the list shows this problem itself
        record = meta.get(SUPPORT_KEY)
        if isinstance(record, dict) and _is_current(record, config):
            continue
        try:
            record = _support_record(config, is_embedding_folder(path))
            write_metadata(folder, **{SUPPORT_KEY: record})
        except OSError:
            continue  # a read-only entry is asked again next time


def _support_record(config: dict[str, Any], embedding: bool = False) -> dict[str, Any]:
    from inference.loading.load import unsupported_message
    from inference.models.registry import get_model_classes
    from inference.vision.families import family_for
    from inference.vision.support import is_vision_config

    try:
        get_model_classes(config)
        problem = None
    except ValueError:
        problem = unsupported_message(config["model_type"])
    # A vision family Branchwise runs through mlx-vlm loads whether or not mlx-lm knows it.
    if problem is not None and is_vision_config(config) and family_for(config["model_type"]):
        problem = None
    # So does the encoder of an embedding model, on Branchwise's own code (inference.embedding).
    if problem is not None and embedding and config["model_type"] in ENCODER_TYPES:
        problem = None
    return {"mlx_lm": _mlx_lm_version(), "model_type": config["model_type"], "problem": problem}


def _is_current(record: dict[str, Any], config: dict[str, Any]) -> bool:
    current = (_mlx_lm_version(), config.get("model_type"))
    return (record.get("mlx_lm"), record.get("model_type")) == current


@functools.cache  # read once per run: the list asks for every entry
def _mlx_lm_version() -> str:
    return metadata.version("mlx-lm")
