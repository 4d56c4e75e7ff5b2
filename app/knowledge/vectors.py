"""Exact vector search in memory: a folder's vectors of one model as a float32 matrix, read from
the index once, shared by every connection of the process. When the folder's generation has
moved on (something was indexed since), only the difference is read: the ids of the vectors
there now, the rows of the new ones (a chunk's vector for a model never changes, and chunk ids
are never reused), so a search while a folder is being embedded does not read 100,000 vectors
again each time. At 100,000 chunks of 256 dimensions a query is one matrix-vector product of a
few milliseconds; no approximate index is needed below about a million chunks.
"""

from __future__ import annotations

import json
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
        loaded = _refreshed(conn, collection_id, model, dimensions, generation, held)
        with self._lock:
            self._held[key] = loaded
        return loaded

    def forget(self, database: str, collection_id: int) -> None:
        with self._lock:
            for key in [k for k in self._held if k[:2] == (database, collection_id)]:
                del self._held[key]


_IN_FOLDER = "FROM vectors WHERE collection = ? AND model = ?"


def _refreshed(
    conn: sqlite3.Connection,
    collection_id: int,
    model: str,
    dimensions: int,
    generation: int,
    held: VectorMatrix | None,
) -> VectorMatrix:
    """The folder's vectors now: `held`'s rows still there, and the rows added since."""
    with sqlite_errors():
        rows = conn.execute(f"SELECT chunk {_IN_FOLDER}", (collection_id, model)).fetchall()
        now = np.fromiter((chunk_id for (chunk_id,) in rows), np.int64, len(rows))
        if held is None or held.matrix.shape[1] != dimensions:
            held = VectorMatrix(generation, np.zeros(0, np.int64), _empty(dimensions))
        kept = np.isin(held.chunk_ids, now)
        added = np.setdiff1d(now, held.chunk_ids)
        new = conn.execute(
            f"SELECT chunk, vector {_IN_FOLDER} AND chunk IN (SELECT value FROM json_each(?))",
            (collection_id, model, json.dumps(added.tolist())),
        ).fetchall()
    new = [(chunk_id, blob) for chunk_id, blob in new if len(blob) == 2 * dimensions]
    matrix = from_blobs([blob for _, blob in new], dimensions) if new else _empty(dimensions)
    return VectorMatrix(
        generation,
        np.concatenate([held.chunk_ids[kept], np.array([cid for cid, _ in new], np.int64)]),
        np.concatenate([held.matrix[kept], matrix]),
    )


def _empty(dimensions: int) -> NDArray[np.float32]:
    return np.zeros((0, dimensions), np.float32)


# The process's one cache: the chat, the tools and the window share the matrices.
VECTOR_CACHE = VectorCache()
