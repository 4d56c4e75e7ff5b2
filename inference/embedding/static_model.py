"""The built-in embedder: a static table of token vectors (WordLlama's `l2_supercat_256`, 32000
x 256 float16, MIT-licensed code, shipped inside the `wordllama` wheel), no MLX and no download.

A text's vector is what WordLlama's own `WordLlamaInference.embed(texts, norm=True)` computes:
the Llama-2 tokenizer from its config file, without special tokens and without truncation; the
table's rows of those token ids (clipped into the table) averaged, then scaled to length 1. The
rows are summed in the same order, so the vectors are WordLlama's to the last bit or two
(tests/inference/embedding/test_embed_static.py compares them with its code). Only the files are
read, with `safetensors` and `tokenizers`: importing `wordllama` would pull pydantic, requests and
toml into the app.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from safetensors.numpy import load_file  # pyright: ignore[reportUnknownVariableType]  # its PathLike is unparametrised
from tokenizers import Tokenizer

from inference.errors import ModelLoadError
from inference.loading.safetensors_check import check_safetensors

TABLE_KEY = "embedding.weight"
# A text longer than this many tokens is summed a slice at a time, so a pasted book costs one
# slice's rows of memory (16 MiB at 256 dimensions), not a row per token at once.
TOKENS_PER_SLICE = 16_384
_READ_CHUNK = 1 << 20


class StaticEmbedder:
    """Token vectors averaged over a text: the same for documents and queries."""

    def __init__(self, table: np.ndarray, tokenizer: Tokenizer, model_id: str) -> None:
        self._table = np.ascontiguousarray(table, dtype=np.float32)
        self._tokenizer = tokenizer
        self.model_id = model_id

    @property
    def dimensions(self) -> int:
        return int(self._table.shape[1])

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One unit row per text, float32; a text without tokens gives a row of zeros."""
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        rows = np.zeros((len(encodings), self.dimensions), dtype=np.float32)
        last = self._table.shape[0] - 1
        for row, encoding in zip(rows, encodings, strict=True):
            ids = np.clip(np.asarray(encoding.ids, dtype=np.int64), 0, last)
            if ids.size:
                row[:] = self._mean(ids)
        return _unit_rows(rows)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return self.embed_documents([text])[0]

    def _mean(self, ids: np.ndarray) -> NDArray[np.float32]:
        total = np.zeros(self.dimensions, dtype=np.float32)
        for start in range(0, ids.size, TOKENS_PER_SLICE):
            total += self._table[ids[start : start + TOKENS_PER_SLICE]].sum(axis=0)
        return total / np.float32(ids.size)


def load_static_embedder(weights: Path, tokenizer_file: Path, name: str) -> StaticEmbedder:
    """The embedder of a table in `weights` (safetensors, key `embedding.weight`, vocabulary x
    dimensions) and the tokenizer config `tokenizer_file`. Its `model_id` is `name` and a digest
    of the table's file, so vectors of another table are never compared with these.

    Raises ModelLoadError naming the file that is missing, damaged or of the wrong shape."""
    check_safetensors(weights)
    try:
        table = load_file(weights).get(TABLE_KEY)
        if table is None:
            raise ModelLoadError(f"{weights.name} holds no {TABLE_KEY} table.")
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
    except ModelLoadError:
        raise
    except Exception as error:  # safetensors and tokenizers raise kinds of their own
        raise ModelLoadError(f"The built-in embedding model could not be read: {error}") from error
    if table.ndim != 2 or table.shape[0] < tokenizer.get_vocab_size() or table.shape[1] < 1:
        raise ModelLoadError(
            f"{weights.name} holds a {table.shape} table, which does not fit its tokenizer's "
            f"{tokenizer.get_vocab_size()} tokens."
        )
    return StaticEmbedder(table, tokenizer, f"{name}-{_digest(weights)[:12]}")


def _unit_rows(rows: np.ndarray) -> NDArray[np.float32]:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(_READ_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
