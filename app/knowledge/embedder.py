"""What the index needs of an embedding model, and how its vectors are kept.

An `Embedder` turns text into unit vectors. The index stores a vector per chunk and model id
(float16, `to_blob`), searches them exactly in memory (`app.knowledge.vectors`), and works with
BM25 alone when there is no embedder. Changing the model embeds the chunks again in the
background; search keeps working on BM25 meanwhile and uses the new vectors as they come.

The index calls `embed_documents` from the thread that runs the index (a plain thread, paused
while a reply generates), in batches of BATCH_SIZE, and `embed_query` from whichever thread
searches. An embedder whose model must run on another thread (an MLX model, which only the
inference worker may run) hands each call over there and waits for the answer inside the call.

`EMBEDDERS` names the embedders the command line can choose (`--embedder NAME`): a factory per
name; `DEFAULT_EMBEDDER` is the one used when none is chosen: the built-in model
(`app.knowledge.builtin_embedder`), as in the app (`app.knowledge.embedder_choice`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from app.knowledge.builtin_embedder import BUILTIN_NAME, load_builtin_embedder

BATCH_SIZE = 64
_STORED = np.dtype("<f2")


class Embedder(Protocol):
    @property
    def model_id(self) -> str:
        """Names the model and everything that changes its vectors (weights, pooling, prompt):
        vectors are kept and compared per model id only."""
        ...

    @property
    def dimensions(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One L2-normalised row per text: shape (len(texts), dimensions), float32."""
        ...

    def embed_query(self, text: str) -> NDArray[np.float32]:
        """The vector to search with for `text` (a model may prefix an instruction to a query
        that it does not prefix to a document): shape (dimensions,), L2-normalised."""
        ...


# The embedders the command line can name: name -> a factory (loads the model when called). A
# library model runs on the app's inference worker only (`app.knowledge.embedder_choice`).
EMBEDDERS: dict[str, Callable[[], Embedder]] = {BUILTIN_NAME: load_builtin_embedder}
# The same default as the app's (`app.knowledge.embedder_choice.DEFAULT_CHOICE`).
DEFAULT_EMBEDDER: str | None = BUILTIN_NAME


def to_blob(vector: NDArray[np.float32]) -> bytes:
    return np.asarray(vector, dtype=_STORED).tobytes()


def from_blobs(blobs: Sequence[bytes], dimensions: int) -> NDArray[np.float32]:
    """The stored vectors, as a float32 matrix of `len(blobs)` rows (the product of a float16
    matrix is several times slower in numpy than the conversion)."""
    joined = np.frombuffer(b"".join(blobs), dtype=_STORED)
    return joined.reshape(len(blobs), dimensions).astype(np.float32)


def checked_vectors(embedder: Embedder, vectors: NDArray[np.float32], count: int) -> None:
    """Refuse what an embedder returned when its shape is not what it promised (a model that
    changed its output would otherwise mix vectors of two sizes under one model id)."""
    if vectors.shape != (count, embedder.dimensions):
        raise ValueError(
            f"The embedding model {embedder.model_id} returned vectors of shape {vectors.shape},"
            f" not ({count}, {embedder.dimensions})."
        )
