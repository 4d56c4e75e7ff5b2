"""Checking a folder before it becomes a library entry: is it a model folder Branchwise could load?

Plain file work (JSON and file names), so it may run on any thread, the GUI's included. Whether
mlx-lm has code for the folder's model type needs mlx-lm itself: that check is
`app.library.model_support`'s, made where a model is added, off the GUI thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inference.loading.model_files import (
    WEIGHTS_INDEX,
    WEIGHTS_PATTERN,
    has_tokenizer,
    needs_remote_code,
    read_json_object,
)
from inference.speech.support import (
    is_speech_config,
    speech_config_problem,
    speech_weights_problem,
)

_PICKLE_WEIGHTS = ("*.bin", "*.pt", "*.pth", "*.ckpt", "*.pkl")


class LibraryError(Exception):
    """Something the library refuses; the message is written for the person using the app."""


class Cancelled(LibraryError):
    """The person cancelled; nothing was added to the library."""


def validate_folder(path: str | Path) -> dict[str, Any]:
    """Check that `path` holds a model folder's files and return its config.

    Raises LibraryError naming the problem: not a folder, no or broken config.json, code that
    would have to run from the folder, pickle-only or missing weights, a missing shard, no
    tokenizer. A Whisper speech model (inference.speech.support) needs its weights only: its
    tokenizer comes with mlx-whisper.
    """
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise LibraryError(f"{folder} is not a folder.")
    config = check_config(folder)
    if is_speech_config(config):
        problem = speech_weights_problem(folder)
        if problem is not None:
            raise LibraryError(f"{folder.name} cannot be used for speech: {problem}")
        return config
    _check_weights(folder)
    if not has_tokenizer(folder):
        raise LibraryError(f"{folder} has no tokenizer (tokenizer.json or tokenizer.model).")
    return config


def check_config(folder: Path) -> dict[str, Any]:
    """The config part of `validate_folder`: it can be checked before the weights arrive."""
    config = read_json(folder / "config.json")
    if config is None:
        raise LibraryError(f"{folder} has no config.json, so it is not an MLX model folder.")
    if is_speech_config(config):
        problem = speech_config_problem(config)
        if problem is not None:
            raise LibraryError(f"{folder.name} cannot be used for speech: {problem}")
        return config
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise LibraryError(f"config.json in {folder} does not name a model type.")
    if needs_remote_code(config, read_json(folder / "tokenizer_config.json") or {}):
        raise LibraryError(
            "This model needs Python code shipped with it (trust_remote_code); "
            "Branchwise never runs such code."
        )
    return config


def read_json(path: Path) -> dict[str, Any] | None:
    """The JSON object in `path`, or None when there is no such file."""
    try:
        return read_json_object(path)
    except ValueError as error:
        raise LibraryError(str(error)) from error


def _check_weights(folder: Path) -> None:
    if not list(folder.glob(WEIGHTS_PATTERN)):
        if any(next(folder.glob(pattern), None) for pattern in _PICKLE_WEIGHTS):
            raise LibraryError(
                f"{folder} has only PyTorch pickle weights (.bin/.pt). Branchwise loads only "
                "safetensors, because pickles can run code; use an MLX version of the model."
            )
        if any(folder.glob("*.gguf")):
            raise LibraryError(f"{folder} holds a GGUF file: import the .gguf file instead.")
        raise LibraryError(f"{folder} has no weights ({WEIGHTS_PATTERN}).")
    index = read_json(folder / WEIGHTS_INDEX)
    shards = sorted(set((index or {}).get("weight_map", {}).values()))
    missing = [shard for shard in shards if not (folder / shard).is_file()]
    if missing:
        raise LibraryError(f"{folder} is incomplete: {', '.join(missing)} is missing.")
