"""Limits checked before a model's files are read or its arrays allocated.

A model folder's small files are parsed whole (json.load, the tokenizers library) and its config
values become array shapes, so an enormous tokenizer.json or a `num_hidden_layers` of 10**9
would exhaust memory or time before any error could be raised. The limits sit far above every
published model (the largest tokenizer.json, Gemma's, is about 33 MB; the deepest model has
under 200 layers), so they only ever refuse damaged or hostile files.
"""

from __future__ import annotations

import fnmatch
import json
import math
import reprlib
from pathlib import Path
from typing import Any, cast

import psutil

from inference.errors import ModelLoadError

_MB = 1024 * 1024
# Largest size for each side file that loading a model reads whole, by name pattern (first match
# wins); other files in a linked folder are never read, so they are not limited.
FILE_LIMITS: tuple[tuple[str, int], ...] = (
    ("config.json", 16 * _MB),
    ("tokenizer.json", 128 * _MB),
    ("chat_template.*", 4 * _MB),
    ("tokenizer_config.json", 64 * _MB),
    ("special_tokens_map.json", 64 * _MB),
    ("added_tokens.json", 64 * _MB),
    ("generation_config.json", 64 * _MB),
    ("model.safetensors.index.json", 64 * _MB),
    ("vocab.json", 64 * _MB),
    ("merges.txt", 64 * _MB),
    ("tokenizer.model", 64 * _MB),
)
# Config values that become dimensions or counts of modules: each must be a whole number from 1
# up to its limit, or a list of them, or absent, or null where the model has a default.
CONFIG_LIMITS: dict[str, int] = {
    "num_hidden_layers": 1024,
    "num_attention_heads": 4096,
    "num_key_value_heads": 4096,
    "num_experts": 4096,
    "num_local_experts": 4096,
    "n_routed_experts": 4096,
    "num_experts_per_tok": 4096,
    "head_dim": 65536,
    "hidden_size": 1 << 20,
    "intermediate_size": 1 << 22,
    "moe_intermediate_size": 1 << 22,
    "vocab_size": 1 << 24,
    "max_position_embeddings": 1 << 30,
}

# Config values that must be positive, finite numbers: mlx-lm passes them on unchecked, and a
# text there fails only at the first reply.
CONFIG_NUMBERS = (
    "rope_theta",
    "rms_norm_eps",
    "layer_norm_eps",
    "layer_norm_epsilon",
    "norm_eps",
    "partial_rotary_factor",
)


def file_limit(name: str) -> int | None:
    """The size limit for a side file called `name`; None for weights and files never read."""
    return next((limit for pattern, limit in FILE_LIMITS if fnmatch.fnmatch(name, pattern)), None)


def check_file_sizes(folder: Path) -> None:
    """Refuse a folder whose config, tokenizer or template files are larger than any real one."""
    for path in sorted(folder.iterdir()):
        limit = file_limit(path.name)
        if limit is not None and path.is_file() and path.stat().st_size > limit:
            raise ModelLoadError(
                f"{path.name} in {folder.name} is {path.stat().st_size / _MB:,.0f} MB, larger "
                f"than any real model's ({limit / _MB:,.0f} MB at most); it is damaged or not a "
                "model file."
            )


def read_config(folder: Path) -> dict[str, Any]:
    """config.json, once its size and values have been checked."""
    path = folder / "config.json"
    limit = file_limit(path.name) or 0
    try:
        if path.stat().st_size > limit:
            raise ModelLoadError(f"config.json in {folder.name} is larger than {limit:,} bytes.")
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelLoadError(f"config.json in {folder.name} cannot be read: {error}") from error
    if not isinstance(config, dict):
        raise ModelLoadError(f"config.json in {folder.name} is not a JSON object.")
    checked = cast("dict[str, Any]", config)  # JSON: the keys are text
    check_config_values(checked, f"config.json in {folder.name}")
    return checked


def check_config_values(config: dict[str, Any], where: str) -> None:
    """Every size in CONFIG_LIMITS a whole number in range and every CONFIG_NUMBERS value a
    positive number, at the top and in `text_config`."""
    sections = [config]
    if isinstance(config.get("text_config"), dict):
        sections.append(config["text_config"])
    for section in sections:
        for key, limit in CONFIG_LIMITS.items():
            value = section.get(key)
            if value is not None and not all(_in_range(v, limit) for v in _sizes(value)):
                raise ModelLoadError(
                    f"{where} sets {key} to {reprlib.repr(value)}; it must be a whole number "
                    f"from 1 to {limit:,}. The file is damaged or was not made for this model."
                )
        for key in CONFIG_NUMBERS:
            value = section.get(key)
            if value is not None and not _positive_number(value):
                raise ModelLoadError(
                    f"{where} sets {key} to {reprlib.repr(value)}; it must be a positive "
                    "number. The file is damaged or was not made for this model."
                )


def _sizes(value: object) -> list[object]:
    """The sizes a config value gives: itself, or a list of them (Gemma 3n gives one per
    layer; a longer list than any model has counts as one value, which is then refused)."""
    if isinstance(value, list):
        sizes = cast("list[object]", value)
        if len(sizes) <= 4096:
            return sizes
    return [value]


def _in_range(value: Any, limit: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= limit


def _positive_number(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def require_memory(needed_bytes: int, what: str) -> None:
    """Refuse work that needs more memory than is available now, before allocating any."""
    available = psutil.virtual_memory().available
    if needed_bytes > available:
        raise ModelLoadError(
            f"{what} needs about {needed_bytes / 1e9:.1f} GB of memory, but only "
            f"{available / 1e9:.1f} GB is available. Close other apps or choose a smaller model."
        )
