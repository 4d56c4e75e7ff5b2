"""The knowledge folders and their documents as the index keeps them: adding, listing and
removing folders (never their files), each folder's status, its documents, and a document's
extracted text put back together from its chunks."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from app.knowledge.database import sqlite_errors, transaction
from app.knowledge.records import (
    Collection,
    CollectionState,
    CollectionStatus,
    DocumentInfo,
    DocumentState,
    KnowledgeError,
)

_COLUMNS = "id, name, root, options, state, embedding_model, generation, synced_at"


def _collection(row: tuple[Any, ...]) -> Collection:
    cid, name, root, options, state, model, generation, synced_at = row
    follow_links = bool(json.loads(options).get("follow_links", False))
    return Collection(
        cid, name, root, follow_links, CollectionState(state), model, generation, synced_at
    )


def add_collection(
    conn: sqlite3.Connection, name: str, root: Path, follow_links: bool = False
) -> Collection:
    """A new knowledge folder `name` over the folder (or file) `root`, not yet indexed."""
    name = name.strip()
    if not name:
        raise KnowledgeError("A knowledge folder needs a name.")
    root = root.expanduser().absolute()
    if not root.exists():
        raise KnowledgeError(f"{root} does not exist.")
    options = json.dumps({"follow_links": follow_links})
    try:
        with transaction(conn):
            conn.execute(
                "INSERT INTO collections (name, root, options, created_at) VALUES (?, ?, ?, ?)",
                (name, str(root.resolve()), options, time.time()),
            )
    except KnowledgeError as error:
        if isinstance(error.__cause__, sqlite3.IntegrityError):
            raise KnowledgeError(f"There is already a knowledge folder named {name!r}.") from None
        raise
    return collection(conn, name)


def collections(conn: sqlite3.Connection) -> list[Collection]:
    with sqlite_errors():
        rows = conn.execute(f"SELECT {_COLUMNS} FROM collections ORDER BY name").fetchall()
    return [_collection(row) for row in rows]


def collection(conn: sqlite3.Connection, name: str) -> Collection:
    with sqlite_errors():
        row = conn.execute(f"SELECT {_COLUMNS} FROM collections WHERE name = ?", (name,)).fetchone()
    if row is None:
        raise KnowledgeError(f"There is no knowledge folder named {name!r}.")
    return _collection(row)


def remove_collection(conn: sqlite3.Connection, name: str) -> None:
    """Forget the folder `name` and everything indexed from it; its files are not touched."""
    found = collection(conn, name)
    with transaction(conn):
        conn.execute("DELETE FROM collections WHERE id = ?", (found.id,))


def retry_failures(conn: sqlite3.Connection, name: str) -> None:
    """Make the folder's failed documents look changed, so the next index run reads them
    again (a run passes over a file whose size and modification time are as recorded)."""
    found = collection(conn, name)
    with transaction(conn):
        conn.execute(
            "UPDATE documents SET mtime_ns = -1 WHERE collection = ? AND state = 'failed'",
            (found.id,),
        )


def set_state(
    conn: sqlite3.Connection, collection_id: int, state: CollectionState, synced: bool = False
) -> None:
    with transaction(conn):
        conn.execute(
            "UPDATE collections SET state = ?, synced_at = CASE WHEN ? THEN ? ELSE synced_at END"
            " WHERE id = ?",
            (state.value, synced, time.time(), collection_id),
        )


def changed(conn: sqlite3.Connection, collection_id: int) -> None:
    """Say, inside a write transaction, that the folder's documents, chunks or vectors
    changed: what is kept in memory of them is read again."""
    conn.execute(
        "UPDATE collections SET generation = generation + 1 WHERE id = ?", (collection_id,)
    )


def generation(conn: sqlite3.Connection, collection_id: int) -> int:
    with sqlite_errors():
        row = conn.execute(
            "SELECT generation FROM collections WHERE id = ?", (collection_id,)
        ).fetchone()
    return -1 if row is None else int(row[0])


def status(conn: sqlite3.Connection, name: str) -> CollectionStatus:
    found = collection(conn, name)
    with sqlite_errors():
        files, chunks = conn.execute(
            "SELECT count(DISTINCT d.id), count(c.id) FROM documents AS d"
            " LEFT JOIN chunks AS c ON c.document = d.id"
            " WHERE d.collection = ? AND d.state = 'indexed'",
            (found.id,),
        ).fetchone()
        (embedded,) = conn.execute(
            "SELECT count(*) FROM vectors WHERE collection = ? AND model = ?",
            (found.id, found.embedding_model or ""),
        ).fetchone()
        failed = conn.execute(
            "SELECT path, failure FROM documents WHERE collection = ? AND state != 'indexed'"
            " ORDER BY path",
            (found.id,),
        ).fetchall()
    return CollectionStatus(found, files, chunks, embedded, tuple(map(tuple, failed)))


_DOCUMENT_COLUMNS = (
    "SELECT d.path, d.format, d.size, d.state, d.failure, d.chars, d.text_sha256,"
    " (SELECT count(*) FROM chunks AS c WHERE c.document = d.id) FROM documents AS d"
)


def _document(row: tuple[Any, ...]) -> DocumentInfo:
    path, fmt, size, state, failure, chars, digest, chunks = row
    return DocumentInfo(path, fmt, size, DocumentState(state), failure, chunks, chars, digest)


def documents(conn: sqlite3.Connection, name: str) -> list[DocumentInfo]:
    """The folder's documents by path: indexed ones, and those that failed or hold no text."""
    found = collection(conn, name)
    with sqlite_errors():
        rows = conn.execute(
            f"{_DOCUMENT_COLUMNS} WHERE d.collection = ? ORDER BY d.path", (found.id,)
        ).fetchall()
    return [_document(row) for row in rows]


def document(conn: sqlite3.Connection, name: str, path: str) -> DocumentInfo | None:
    """The document at `path` in folder `name`, or None when the index has none there."""
    found = collection(conn, name)
    with sqlite_errors():
        row = conn.execute(
            f"{_DOCUMENT_COLUMNS} WHERE d.collection = ? AND d.path = ?", (found.id, path)
        ).fetchone()
    return None if row is None else _document(row)


def document_text(
    conn: sqlite3.Connection, name: str, path: str, start: int = 0, end: int | None = None
) -> str:
    """The extracted text of the document at `path` in folder `name` (characters `start` to
    `end` of it), put back together from its chunks. KnowledgeError if it is not indexed."""
    found = collection(conn, name)
    with sqlite_errors():
        row = conn.execute(
            "SELECT id, chars FROM documents WHERE collection = ? AND path = ?", (found.id, path)
        ).fetchone()
        if row is None:
            raise KnowledgeError(f"{path} is not in the knowledge folder {name!r}.")
        document_id, chars = row
        return spans_text(conn, document_id, start, chars if end is None else min(end, chars))


def spans_text(conn: sqlite3.Connection, document_id: int, start: int, end: int) -> str:
    """Characters `start` to `end` of a document's extracted text, from the chunks holding them
    (consecutive chunks touch or overlap, so each character is taken once)."""
    rows = conn.execute(
        "SELECT span_start, span_end, text FROM chunks WHERE document = ?"
        " AND span_end > ? AND span_start < ? ORDER BY seq",
        (document_id, start, end),
    )
    return merged_spans(rows, start, end)


def merged_spans(chunks: Iterable[tuple[int, int, str]], start: int, end: int) -> str:
    """Characters `start` to `end` of a document's text from its (span_start, span_end, text)
    chunks in order. Each chunk's text is the document's text at its span (the chunker cuts
    exact spans) and consecutive ones touch or overlap, so the overlap is taken from the chunk
    before and skipped in the next: no character is repeated. A gap between chunks (never cut by
    the chunker) is left out, so the result is then shorter than `end - start`."""
    pieces: list[str] = []
    at = start
    for span_start, span_end, text in chunks:
        if span_end > at:
            pieces.append(text[max(at - span_start, 0) : end - span_start])
            at = span_end
    return "".join(pieces)
