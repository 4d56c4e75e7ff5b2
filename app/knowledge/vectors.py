"""Exact vector search in memory: a folder's vectors of one model as a float32 matrix, read from
the index once and again only when the folder's generation has moved on (something was indexed
since), shared by every connection of the process. At 100,000 chunks of 256 dimensions a query
is one matrix-vector product of a few milliseconds; no approximate index is needed below about
a million chunks.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from app.knowledge import catalog
from app.knowledge.database import sqlite_errors
from app.knowledge.embedder import from_blobs


@dataclass(frozen=True)
class VectorMatrix:
    generation: int
    chunk_ids: NDArray[np.int64]
    matrix: NDArray[np.float32]  # one unit row per chunk id

    def nearest(self, query: NDArray[np.float32], limit: int) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) of the `limit` rows nearest `query`, nearest first."""
        if not len(self.chunk_ids) or limit < 1:
            return []
        scores = self.matrix @ query.astype(np.float32)
        if len(scores) > limit:
            top = np.argpartition(-scores, limit - 1)[:limit]
        else:
            top = np.arange(len(scores))
        best = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self.chunk_ids[i]), float(scores[i])) for i in best]


class VectorCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[tuple[str, int, str], VectorMatrix] = {}

    def matrix(
        self,
        conn: sqlite3.Connection,
        database: str,
        collection_id: int,
        model: str,
        dimensions: int,
    ) -> VectorMatrix:
        """The folder's vectors of `model` as they are in the index now."""
        generation = catalog.generation(conn, collection_id)
        key = (database, collection_id, model)
        with self._lock:
            held = self._held.get(key)
        if held is not None and held.generation == generation:
            return held
        loaded = _load(conn, collection_id, model, dimensions, generation)
        with self._lock:
            self._held[key] = loaded
        return loaded

    def forget(self, database: str, collection_id: int) -> None:
        with self._lock:
            for key in [k for k in self._held if k[:2] == (database, collection_id)]:
                del self._held[key]


def _load(
    conn: sqlite3.Connection, collection_id: int, model: str, dimensions: int, generation: int
) -> VectorMatrix:
    with sqlite_errors():
        rows = conn.execute(
            "SELECT v.chunk, v.vector FROM vectors AS v JOIN chunks AS c ON c.id = v.chunk"
            " JOIN documents AS d ON d.id = c.document WHERE d.collection = ? AND v.model = ?"
            " ORDER BY v.chunk",
            (collection_id, model),
        ).fetchall()
    blobs = [blob for _, blob in rows if len(blob) == 2 * dimensions]
    ids = np.fromiter((cid for cid, blob in rows if len(blob) == 2 * dimensions), np.int64)
    matrix = from_blobs(blobs, dimensions) if blobs else np.zeros((0, dimensions), np.float32)
    return VectorMatrix(generation, ids, matrix)


# The process's one cache: the chat, the tools and the window share the matrices.
VECTOR_CACHE = VectorCache()
