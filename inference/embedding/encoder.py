"""An embedding model folder loaded on MLX, embedding on the thread that loaded it (the inference
worker's: it owns the arrays).

What a text goes through is the sentence-transformers pipeline the folder describes
(`inference.embedding.folder`): its prompt put before it (the query's or the document's), the
folder's own tokenizer with its special tokens (Qwen3-Embedding's appends the end-of-text token
its last-token pooling reads; BERT's frames the text in [CLS] ... [SEP]), cut to the model's
limit as Hugging Face cuts it; the model's token states; the pooling; the dense steps; length 1.

The networks: mlx-lm's own classes for decoders, their weights loaded by mlx-lm (quantized ones
too) with or without the `model.` prefix a task-less checkpoint leaves out, run causally
(Qwen3) or both ways (EmbeddingGemma, `inference.embedding.attention`); Branchwise's BERT
(`inference.embedding.bert`) for encoders. Texts are run shortest first, in batches padded on
the right to their longest, so a batch wastes little and a text's vector does not depend on its
neighbours.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import mlx.core as mx
import mlx.nn as nn
import numpy as np
from mlx_lm.utils import load_model as load_mlx_model
from mlx_lm.utils import load_tokenizer
from numpy.typing import NDArray

from inference.cpu.float32_weights import DEFAULT_POLICY, apply_policy
from inference.cpu.layout_choice import LayoutRequest
from inference.embedding.attention import BothWays
from inference.embedding.bert import Bert, BertArgs
from inference.embedding.folder import (
    DenseStep,
    EmbeddingFolder,
    embedding_model_id,
    read_embedding_folder,
)
from inference.embedding.pooling import Dense, pool, unit_rows
from inference.errors import ModelLoadError
from inference.loading.folder_check import check_before_load
from inference.loading.model_files import needs_remote_code, read_json_object
from inference.loading.safetensors_check import check_safetensors
from inference.models.registry import get_model_classes

# Padded tokens per forward pass, and texts per pass: enough to keep a GPU busy, little enough
# that one pass never holds the worker for long.
BATCH_TOKENS = 4096
BATCH_TEXTS = 64

Network = Callable[[mx.array, mx.array], mx.array]  # (ids, lengths) -> token states
Encode = Callable[[str], list[int]]  # a text to its token ids, special tokens included


class MlxEmbedder:
    """An embedding model on MLX. Use it on the thread that loaded it."""

    def __init__(
        self, spec: EmbeddingFolder, network: Network, dense: list[Dense], encode: Encode
    ) -> None:
        self.spec = spec
        self.model_id = embedding_model_id(spec)
        self.dimensions = spec.dimensions
        self._network = network
        self._dense = dense
        self._encode = encode

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One unit float32 row per text, each after the model's document prompt."""
        return self._vectors([self.spec.document_prompt + text for text in texts])

    def embed_query(self, text: str) -> NDArray[np.float32]:
        """The unit vector of `text` after the model's query prompt (an instruction, for
        Qwen3-Embedding)."""
        return self._vectors([self.spec.query_prompt + text])[0]

    def _vectors(self, texts: list[str]) -> NDArray[np.float32]:
        ids = [self._encode(text) for text in texts]
        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for batch in batches([len(i) for i in ids]):
            rows[batch] = self._run([ids[i] for i in batch])
        return rows

    def _run(self, ids: list[list[int]]) -> NDArray[np.float32]:
        width = max(max(len(row) for row in ids), 1)
        padded = mx.array([row + [0] * (width - len(row)) for row in ids], dtype=mx.int32)
        lengths = mx.array([len(row) for row in ids], dtype=mx.int32)
        vectors = pool(self._network(padded, lengths), lengths, self.spec.pooling)
        for step in self._dense:
            vectors = step(vectors)
        return unit_rows(vectors)


def batches(lengths: Sequence[int]) -> list[list[int]]:
    """The texts' indices, shortest first, in groups whose padded size stays within
    BATCH_TOKENS (a longer text goes alone) and BATCH_TEXTS."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    for index in order:
        group = groups[-1] if groups else None
        width = lengths[index]  # the longest so far: the order is by length
        if group is None or len(group) >= BATCH_TEXTS or width * (len(group) + 1) > BATCH_TOKENS:
            groups.append([index])
        else:
            group.append(index)
    return groups


def load_embedder(path: str | Path, cpu_float32: str = DEFAULT_POLICY) -> MlxEmbedder:
    """Load the embedding model folder at `path` on this thread.

    Raises ModelLoadError, in words for the person, when the folder is not an embedding model
    Branchwise runs, or is damaged."""
    return _build(Path(path).expanduser(), cpu_float32, lazy=False)


def check_embedding_folder(path: str | Path) -> int:
    """The deep check of an embedding model folder before it joins the library (in a child
    process: `app.library.folder_deep_check`): everything a load reads, the network built
    lazily (nothing computed). Returns the bytes its weights take; raises ModelLoadError."""
    folder = Path(path)
    weights = check_before_load(folder)
    _build(folder, "never", lazy=True)
    return weights


# An embedding model's products read many rows at once, where the layout a decode step's one-row
# products are measured for (inference.cpu.layout_choice) makes no difference worth a copy.
_AS_STORED = LayoutRequest("stored", forced_by="an embedding model, whose products read many rows")


def _build(folder: Path, cpu_float32: str, lazy: bool) -> MlxEmbedder:
    spec = read_embedding_folder(folder)
    config = read_json_object(folder / "config.json") or {}
    if needs_remote_code(config, read_json_object(folder / "tokenizer_config.json") or {}):
        raise ModelLoadError(f"{folder.name} needs code shipped in its folder; never run.")
    check_before_load(folder)
    for step in spec.dense:
        check_safetensors(step.weights)
    try:
        tokenizer = load_tokenizer(folder)
        if spec.model_type == "bert":
            network = _bert(folder, config, lazy)
        else:
            model = _decoder(spec, config, lazy)
            if not lazy:
                apply_policy(model, config, cpu_float32, _AS_STORED)
            network = _Decoder(model.model, spec.bidirectional)
        dense = [_dense_step(step) for step in spec.dense]
    except ModelLoadError:
        raise
    except Exception as error:  # mlx, mlx-lm, safetensors and transformers raise many kinds
        message = f"The embedding model in {folder} could not be loaded: {error}"
        raise ModelLoadError(message) from error

    def encode(text: str) -> list[int]:
        found = tokenizer._tokenizer(text, truncation=True, max_length=spec.max_tokens)
        return list(found["input_ids"])

    return MlxEmbedder(spec, network, dense, encode)


def _decoder(spec: EmbeddingFolder, config: dict[str, Any], lazy: bool) -> nn.Module:
    overrides = _layer_pattern(config) if spec.model_type == "gemma3_text" else {}
    model, _ = load_mlx_model(
        spec.path, lazy=lazy, model_config=overrides, get_model_classes=_task_free
    )
    return model


class _Decoder:
    """A decoder's token states (mlx-lm's model without its output layer): causal, or both ways
    through masks that stand in for its layer caches."""

    def __init__(self, inner: nn.Module, both_ways: bool) -> None:
        self.inner = inner
        self.both_ways = both_ways

    def __call__(self, ids: mx.array, lengths: mx.array) -> mx.array:
        caches = [BothWays(lengths)] * len(self.inner.layers) if self.both_ways else None
        return self.inner(ids, cache=caches)


def _task_free(config: dict[str, Any]) -> tuple[type[nn.Module], type[Any]]:
    """mlx-lm's classes for `config`, loading a checkpoint saved without the task head (names
    without `model.`) as well as one with it; the output layer is never used, so never kept."""
    model_class, args_class = get_model_classes(config)
    base = cast("type[nn.Module]", model_class)

    class Embedding(base):
        def sanitize(self, weights: dict[str, mx.array]) -> dict[str, mx.array]:
            if "lm_head" in self:
                del self["lm_head"]
            return {
                name if name.startswith("model.") else f"model.{name}": value
                for name, value in weights.items()
                if not name.startswith("lm_head.")
            }

    return Embedding, args_class


def _layer_pattern(config: dict[str, Any]) -> dict[str, Any]:
    """mlx-lm's Gemma 3 places its global layers by `sliding_window_pattern`; a config that
    lists `layer_types` instead must list them in that pattern."""
    kinds = config.get("layer_types")
    if not isinstance(kinds, list):
        return {}
    layers = [str(kind) for kind in cast("list[object]", kinds)]
    period = layers.index("full_attention") + 1 if "full_attention" in layers else len(layers) + 1
    expected = [
        "full_attention" if (i + 1) % period == 0 else "sliding_attention"
        for i in range(len(layers))
    ]
    if layers != expected:
        raise ModelLoadError("This Gemma 3's global layers do not repeat in a fixed pattern.")
    return {"sliding_window_pattern": period}


def _bert(folder: Path, config: dict[str, Any], lazy: bool) -> Network:
    if config.get("quantization"):
        raise ModelLoadError(f"{folder.name} is a quantized BERT, which Branchwise cannot run.")
    model = Bert(BertArgs.from_config(config))
    weights: dict[str, mx.array] = {}
    for file in sorted(folder.glob("model*.safetensors")):
        weights.update(_tensors(file))
    model.load_weights(list(Bert.sanitize(weights).items()), strict=True)
    if not lazy:
        mx.eval(model.parameters())  # pyright: ignore[reportUnknownMemberType]  # mlx stub: eval(*args) untyped
    return model


def _dense_step(step: DenseStep) -> Dense:
    layer = Dense(step)
    layer.load_weights(list(_tensors(step.weights).items()), strict=True)
    mx.eval(layer.parameters())  # pyright: ignore[reportUnknownMemberType]  # mlx stub: eval(*args) untyped
    return layer


def _tensors(path: Path) -> dict[str, mx.array]:
    tensors = mx.load(str(path))
    if not isinstance(tensors, dict):
        raise ModelLoadError(f"{path.name} holds no named tensors.")
    return tensors
