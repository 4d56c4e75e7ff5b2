"""Vectors for the chunks of a folder that have none for the embedder's model, a batch at a
time (each batch one transaction: a run stopped midway resumes at the first chunk without a
vector). Once every chunk has one, the vectors of any other model are dropped. Search uses
what is there meanwhile: the new vectors as they come, BM25 for every chunk.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from app.knowledge import catalog
from app.knowledge.database import sqlite_errors, transaction
from app.knowledge.embedder import BATCH_SIZE, Embedder, checked_vectors, to_blob
from app.knowledge.pause import CancelFlag, Gate
from app.knowledge.records import KnowledgeError, SyncCancelled

_MISSING = (
    "FROM chunks AS c JOIN documents AS d ON d.id = c.document WHERE d.collection = ?"
    " AND c.id > ? AND NOT EXISTS"
    " (SELECT 1 FROM vectors AS v WHERE v.chunk = c.id AND v.model = ?)"
)


def count_missing(conn: sqlite3.Connection, collection_id: int, model: str) -> int:
    with sqlite_errors():
        (count,) = conn.execute(f"SELECT count(*) {_MISSING}", (collection_id, 0, model)).fetchone()
    return count


def embed_missing(
    conn: sqlite3.Connection,
    collection_id: int,
    embedder: Embedder,
    cancel: CancelFlag,
    gate: Gate,
    done: Callable[[int, float], None],
) -> int:
    """Embed the folder's chunks that lack a vector of `embedder`; `done(count, waited_s)`
    after each batch. Returns how many were embedded."""
    model = embedder.model_id
    after = 0
    embedded = 0
    while True:
        waited = gate.wait(cancel)
        if cancel.is_set():
            raise SyncCancelled("Indexing was cancelled; the vectors made so far are kept.")
        with sqlite_errors():
            rows = conn.execute(
                f"SELECT c.id, c.text {_MISSING} ORDER BY c.id LIMIT ?",
                (collection_id, after, model, BATCH_SIZE),
            ).fetchall()
        if not rows:
            break
        try:
            vectors = embedder.embed_documents([text for _, text in rows])
            checked_vectors(embedder, vectors, len(rows))
        except Exception as error:  # the text index is whole: search goes on with BM25
            raise KnowledgeError(
                f"Embedding with {model} stopped: {error}. Search uses the text index meanwhile."
            ) from error
        with transaction(conn):
            conn.executemany(
                "INSERT OR REPLACE INTO vectors (chunk, model, collection, vector)"
                " VALUES (?, ?, ?, ?)",
                [
                    (cid, model, collection_id, to_blob(vector))
                    for (cid, _), vector in zip(rows, vectors, strict=True)
                ],
            )
            catalog.changed(conn, collection_id)
        after = rows[-1][0]
        embedded += len(rows)
        done(len(rows), waited)
    with transaction(conn):
        dropped = conn.execute(
            "DELETE FROM vectors WHERE collection = ? AND model != ?",
            (collection_id, model),
        ).rowcount
        if dropped:
            catalog.changed(conn, collection_id)
    return embedded
