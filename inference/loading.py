"""Load an MLX-format model folder with mlx-lm, refusing anything that would run its own code.

Only `model*.safetensors` weights are read (never pickles), and `trust_remote_code` is never
passed: a config that points at Python code in the folder (`auto_map`, `model_file`) is refused.
Loading runs on the inference worker thread, which then owns the model's arrays.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mlx_lm
from mlx.utils import tree_flatten
from mlx_lm.utils import _get_classes

from inference.errors import ModelLoadError
from inference.folder_check import check_before_load
from inference.template_check import check_template

if TYPE_CHECKING:
    import mlx.nn as nn
    from mlx_lm.tokenizer_utils import TokenizerWrapper

# Config keys that hold the longest sequence the model was trained for, most specific first.
_CONTEXT_KEYS = ("max_position_embeddings", "max_sequence_length", "seq_length", "n_positions")
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "tokenizer_config.json")


@dataclass(frozen=True, eq=False)
class LoadedModel:
    """A model ready for the engine, with the facts the app shows about it."""

    model: nn.Module = field(repr=False)
    tokenizer: TokenizerWrapper = field(repr=False)
    config: dict[str, Any] = field(repr=False)
    path: Path
    model_type: str
    context_length: int | None
    weights_bytes: int

    @property
    def model_id(self) -> str:
        """A short name for the model: its folder's name."""
        return self.path.name


def load_model(path: str | Path) -> LoadedModel:
    """Load the MLX model folder at `path` (config.json, safetensors, tokenizer).

    Raises ModelLoadError with a message for the person using the app when the folder is
    missing, incomplete, corrupt, of a type mlx-lm does not know, or needs remote code.
    """
    folder = Path(path).expanduser()
    config = _read_config(folder)
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise ModelLoadError(f"config.json in {folder} does not say which model type it is.")
    if "auto_map" in config or "model_file" in config:
        raise ModelLoadError(
            f"The model type '{model_type}' needs Python code shipped in the model folder "
            "(trust_remote_code); Branchwise never runs such code."
        )
    try:
        _get_classes(config)
    except ValueError as error:
        raise ModelLoadError(
            f"The model type '{model_type}' is not supported by mlx-lm {mlx_lm.__version__}."
        ) from error
    weights = sorted(folder.glob("model*.safetensors"))
    if not weights:
        raise ModelLoadError(f"{folder} has no model*.safetensors weight files.")
    if not any((folder / name).is_file() for name in _TOKENIZER_FILES):
        raise ModelLoadError(f"{folder} has no tokenizer (tokenizer.json or tokenizer.model).")
    try:
        check_before_load(folder)
        model, tokenizer = mlx_lm.load(str(folder))
    except Exception as error:  # mlx, safetensors and transformers raise many kinds.
        raise ModelLoadError(f"The model in {folder} could not be loaded: {error}") from error
    check_template(tokenizer, f"The chat template of {folder.name}")
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        config=config,
        path=folder,
        model_type=model_type,
        context_length=_context_length(config),
        weights_bytes=sum(a.nbytes for _, a in tree_flatten(model.parameters())),
    )


def _read_config(folder: Path) -> dict[str, Any]:
    if not folder.is_dir():
        raise ModelLoadError(f"There is no model folder at {folder}.")
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise ModelLoadError(f"{folder} has no config.json, so it is not an MLX model folder.")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelLoadError(f"config.json in {folder} cannot be read: {error}") from error
    if not isinstance(config, dict):
        raise ModelLoadError(f"config.json in {folder} is not a JSON object.")
    return config


def _context_length(config: dict[str, Any]) -> int | None:
    for section in (config, config.get("text_config") or {}):
        for key in _CONTEXT_KEYS:
            value = section.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None
