"""What a model folder is made of, as plain data: no MLX here, so the app layer can import it
(`inference/__init__.py` loads its heavy modules lazily) to list, copy and download models.

The library, the downloader and the loader all read these names, so a file the loader needs is
never left behind by a copy or a download.
"""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any, cast

WEIGHTS_PATTERN = "model*.safetensors"
WEIGHTS_INDEX = "model.safetensors.index.json"
# The files a model needs; everything else in a repository or folder is left behind. The
# tiktoken names are those mlx-lm's own downloads take for tiktoken-based tokenizers.
MODEL_FILE_PATTERNS = (
    "config.json",
    WEIGHTS_PATTERN,
    WEIGHTS_INDEX,
    "tokenizer*.json",
    "tokenizer.model",
    "*.tiktoken",
    "tiktoken.model",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
    "generation_config.json",
    "chat_template.*",
    # A vision model's image processor: without it the model reads no images.
    "preprocessor_config.json",
    "processor_config.json",
    # An embedding model's steps after the transformer, and its prompts and length limit
    # (the sentence-transformers layout: inference.embedding.folder).
    "modules.json",
    "config_sentence_transformers.json",
    "sentence_bert_config.json",
)
# The files of those steps, each in a subfolder of its own ("1_Pooling/config.json").
STEP_FILE_PATTERNS = ("*_Pooling/config.json", "*_Dense/config.json", "*_Dense/model.safetensors")
# A folder has a tokenizer when it holds one of these (besides tokenizer_config.json, which
# only configures one).
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "tiktoken.model")
TOKENIZER_PATTERNS = (*TOKENIZER_FILES, "*.tiktoken")
# Config keys that hold the longest sequence the model was trained for, most specific first.
CONTEXT_KEYS = ("max_position_embeddings", "max_sequence_length", "seq_length", "n_positions")


def is_model_file(name: str) -> bool:
    """Whether a file of this name (its path in the folder, "/" between parts) is one a model
    needs; the rest of a folder is left behind. Below the top, only an embedding model's step
    files are."""
    depth = name.count("/")
    patterns = MODEL_FILE_PATTERNS if depth == 0 else STEP_FILE_PATTERNS if depth == 1 else ()
    return any(fnmatch.fnmatch(name, pattern) for pattern in patterns)


def context_length(config: dict[str, Any]) -> int | None:
    """The model's trained context length from its config (or its `text_config`), if it says."""
    for section in (config, config.get("text_config") or {}):
        for key in CONTEXT_KEYS:
            value = section.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


def needs_remote_code(config: dict[str, Any], tokenizer_config: dict[str, Any]) -> bool:
    """Whether the configs point at Python code shipped in the folder (trust_remote_code)."""
    return "auto_map" in config or "model_file" in config or "auto_map" in tokenizer_config


def has_tokenizer(folder: Path) -> bool:
    """Whether `folder` holds a tokenizer file mlx-lm's tokenizer loader can read."""
    return any(next(folder.glob(pattern), None) for pattern in TOKENIZER_PATTERNS)


def read_json_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in the file at `path`, or None when there is no such file. Raises
    ValueError, with a message for the person, when it cannot be read or holds something else:
    the library and the loader turn that into their own errors."""
    if not path.is_file():
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path.name} in {path.parent} cannot be read: {error}") from error
    if not isinstance(value, dict):
        raise ValueError(f"{path.name} in {path.parent} is not a JSON object.")
    return cast("dict[str, Any]", value)  # JSON: the keys are text
