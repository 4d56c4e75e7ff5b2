"""An embedding model folder, read without MLX: what tells it from a chat model, and what running
it takes. The library lists with this; `inference.embedding.encoder` loads what it describes.

An embedding model is a folder in the sentence-transformers layout, as Qwen3-Embedding,
EmbeddingGemma and bge publish theirs: `modules.json` names the steps (the transformer, then
`Pooling`, optionally `Dense` layers, then `Normalize`), each step's folder holds its config
(`1_Pooling/config.json`; `2_Dense/config.json` and its weights), and
`config_sentence_transformers.json` may hold the prompts put before queries and documents.
Branchwise runs the pooling modes those models use (first token, mean, last token) over the
model types it has code for; anything else is refused here with the reason, before any weights
are read.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, cast

from inference.errors import ModelLoadError
from inference.loading.identity import files_digest, weights_digest

MODULES_FILE = "modules.json"
SETTINGS_FILE = "config_sentence_transformers.json"
SEQUENCE_FILE = "sentence_bert_config.json"
# Model types with code to embed: mlx-lm's decoders, and Branchwise's own BERT encoder.
MODEL_TYPES = ("qwen3", "gemma3_text", "bert")
# Of those, the ones mlx-lm has no code for (so the library must not ask it).
ENCODER_TYPES = ("bert",)
# A longer text is cut to this many tokens: the index's chunks are a few hundred, and attention
# over a longer one would take memory in proportion to its square.
MAX_TOKENS = 2048
_SMALL_FILE_BYTES = 1 << 20
_MODULE = "sentence_transformers.models."
_ACTIVATIONS = {
    "torch.nn.modules.linear.Identity": "identity",
    "torch.nn.modules.activation.Tanh": "tanh",
}


class Pooling(StrEnum):
    """How token states become one vector."""

    FIRST = "cls"  # the first token's state (BERT's [CLS])
    MEAN = "mean"  # the average over the text's tokens
    LAST = "lasttoken"  # the last token's state (a causal model: it has read the whole text)


@dataclass(frozen=True)
class DenseStep:
    """A linear layer after pooling (sentence-transformers' `Dense`)."""

    weights: Path
    in_features: int
    out_features: int
    bias: bool
    activation: str  # "identity" or "tanh"


@dataclass(frozen=True)
class EmbeddingFolder:
    """What embedding with the model in `path` takes."""

    path: Path
    model_type: str
    pooling: Pooling
    dense: tuple[DenseStep, ...]
    dimensions: int
    query_prompt: str
    document_prompt: str
    max_tokens: int
    bidirectional: bool  # a decoder whose attention runs both ways (EmbeddingGemma)


def is_embedding_folder(folder: Path) -> bool:
    """Whether `folder` is laid out as an embedding model (it may still be one Branchwise cannot
    run: `read_embedding_folder` says why)."""
    return (folder / MODULES_FILE).is_file()


def read_embedding_folder(folder: Path) -> EmbeddingFolder:
    """The embedding model in `folder`. Raises ModelLoadError, in words for the person, when it
    is not one or is one Branchwise cannot run."""
    modules = _read(folder / MODULES_FILE)
    if not isinstance(modules, list) or not modules:
        raise ModelLoadError(f"{MODULES_FILE} in {folder.name} lists no steps.")
    config = _object(_read(folder / "config.json"), "config.json", folder)
    model_type = str(config.get("model_type", ""))
    if model_type not in MODEL_TYPES:
        raise ModelLoadError(
            f"{folder.name} is an embedding model of type '{model_type}'; Branchwise embeds with "
            f"{', '.join(MODEL_TYPES)} models."
        )
    pooling, dense = _steps(folder, cast("list[Any]", modules))
    hidden = config.get("hidden_size")
    dimensions = dense[-1].out_features if dense else hidden
    if not isinstance(dimensions, int) or dimensions < 1:
        raise ModelLoadError(f"config.json in {folder.name} does not give the hidden size.")
    query, document = _prompts(folder)
    bidirectional = bool(config.get("use_bidirectional_attention", False))
    if model_type == "gemma3_text" and not bidirectional:
        raise ModelLoadError(f"{folder.name} is a causal Gemma 3: no embedding model is built so.")
    return EmbeddingFolder(
        path=folder,
        model_type=model_type,
        pooling=pooling,
        dense=dense,
        dimensions=dimensions,
        query_prompt=query,
        document_prompt=document,
        max_tokens=_max_tokens(folder, config),
        bidirectional=bidirectional,
    )


def embedding_model_id(spec: EmbeddingFolder) -> str:
    """Names the vectors the folder's model makes: the folder's name and a digest of its weights,
    its small files and its steps' weights, so another model's vectors are never compared with
    these."""
    digest = hashlib.blake2b(digest_size=8)
    digest.update(f"{weights_digest(spec.path)}\0{files_digest(spec.path)}\0".encode())
    for step in spec.dense:
        digest.update(step.weights.read_bytes())
    return f"{spec.path.name}-{digest.hexdigest()}"


def _steps(folder: Path, modules: list[Any]) -> tuple[Pooling, tuple[DenseStep, ...]]:
    kinds: list[str] = []
    pooling: Pooling | None = None
    dense: list[DenseStep] = []
    for module in modules:
        entry = _object(module, MODULES_FILE, folder)
        kind = str(entry.get("type", "")).removeprefix(_MODULE)
        step = folder / str(entry.get("path", ""))
        if not step.resolve().is_relative_to(folder.resolve()):
            raise ModelLoadError(f"{MODULES_FILE} in {folder.name} points outside the folder.")
        kinds.append(kind)
        if kind == "Pooling":
            pooling = _pooling(step, folder)
        elif kind == "Dense":
            dense.append(_dense(step, folder))
        elif kind not in ("Transformer", "Normalize"):
            raise ModelLoadError(f"{folder.name} has a '{kind}' step, which Branchwise cannot run.")
    if kinds[:2] != ["Transformer", "Pooling"] or pooling is None:
        raise ModelLoadError(f"{folder.name} does not pool its transformer's output first.")
    return pooling, tuple(dense)


def _pooling(step: Path, folder: Path) -> Pooling:
    config = _object(_read(step / "config.json"), f"{step.name}/config.json", folder)
    chosen = [mode for mode in Pooling if config.get(f"pooling_mode_{_key(mode)}") is True]
    others = [key for key, value in config.items() if key.startswith("pooling_mode") and value]
    if len(chosen) != 1 or len(others) != 1:
        raise ModelLoadError(
            f"{folder.name} pools by {', '.join(others) or 'nothing'}; Branchwise pools by one of "
            "the first token, the mean or the last token."
        )
    if config.get("include_prompt", True) is not True:
        raise ModelLoadError(f"{folder.name} leaves its prompt out of the pooling: not supported.")
    return chosen[0]


def _key(mode: Pooling) -> str:
    return {Pooling.FIRST: "cls_token", Pooling.MEAN: "mean_tokens"}.get(mode, mode.value)


def _dense(step: Path, folder: Path) -> DenseStep:
    config = _object(_read(step / "config.json"), f"{step.name}/config.json", folder)
    weights = step / "model.safetensors"
    sizes = (config.get("in_features"), config.get("out_features"))
    activation = _ACTIVATIONS.get(str(config.get("activation_function")))
    if not all(isinstance(n, int) and 0 < n <= 1 << 16 for n in sizes) or activation is None:
        raise ModelLoadError(f"{step.name} in {folder.name} is a layer Branchwise cannot run.")
    if not weights.is_file():
        raise ModelLoadError(f"{folder.name} lacks {step.name}/model.safetensors.")
    in_features, out_features = cast("tuple[int, int]", sizes)
    return DenseStep(weights, in_features, out_features, config.get("bias") is True, activation)


def _prompts(folder: Path) -> tuple[str, str]:
    settings = _object(_read(folder / SETTINGS_FILE) or {}, SETTINGS_FILE, folder)
    prompts = _object(settings.get("prompts") or {}, SETTINGS_FILE, folder)

    def text(*names: str) -> str:
        found = next((prompts[n] for n in names if isinstance(prompts.get(n), str)), "")
        return str(found)

    return text("query"), text("document", "passage", "corpus")


def _max_tokens(folder: Path, config: dict[str, Any]) -> int:
    sequence = _object(_read(folder / SEQUENCE_FILE) or {}, SEQUENCE_FILE, folder)
    for limit in (sequence.get("max_seq_length"), config.get("max_position_embeddings")):
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            return min(limit, MAX_TOKENS)
    return MAX_TOKENS


def _read(path: Path) -> Any:
    """A small JSON file's value (None when there is no such file), its size checked first."""
    if path.is_file() and path.stat().st_size > _SMALL_FILE_BYTES:
        raise ModelLoadError(f"{path.name} in {path.parent.name} is too large to be a config.")
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        message = f"{path.name} in {path.parent.name} cannot be read: {error}"
        raise ModelLoadError(message) from error


def _object(value: Any, name: str, folder: Path) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ModelLoadError(f"{name} in {folder.name} is not what an embedding model holds.")
    return cast("dict[str, Any]", value)
