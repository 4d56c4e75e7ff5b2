"""One file read into the index, in one transaction: its chunks (and their search entries)
replace the ones it had, and chunks whose text did not change keep their vectors; a crash or a
kill mid-file leaves the file as it was before, to be read again at the next run.

What cannot be read is recorded with the reason, for the person. A file that changes while it
is read is not recorded with what was read (it may be half of each version): a new file is
recorded as failed, a known one keeps its previous version, and either is read again next time,
since its stored modification time is older than the file's.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from app.knowledge import catalog
from app.knowledge.chunking import Chunk, Chunker
from app.knowledge.database import transaction
from app.knowledge.parsing.blocks import UnreadableDocument
from app.knowledge.parsing.formats import document_blocks, no_text_reason
from app.knowledge.pause import CancelFlag
from app.knowledge.records import DocumentState, SyncCancelled
from app.knowledge.scanning import FoundFile

_log = logging.getLogger(__name__)
_INSERT_BATCH = 256
_HASH_PIECE = 1024 * 1024
CHANGED_WHILE_READ = "It changed while it was being read; it is read again at the next sync."


@dataclass(frozen=True, slots=True)
class Written:
    state: DocumentState
    chunks: int
    failure: str | None  # why it failed or holds no text


class ChangedWhileRead(Exception):
    pass


def file_sha256(path: str, cancel: CancelFlag) -> str:
    """The digest of the file's bytes (read-only, a piece at a time). OSError as it comes."""
    digest = hashlib.sha256()
    with open(path, "rb") as raw:
        while piece := raw.read(_HASH_PIECE):
            digest.update(piece)
            if cancel.is_set():
                raise SyncCancelled("Indexing was cancelled.")
    return digest.hexdigest()


def write_document(
    conn: sqlite3.Connection,
    collection_id: int,
    found: FoundFile,
    sha256: str,
    previous_id: int | None,
) -> Written:
    """Read `found` into the index (replacing document `previous_id`, the same path's, if any).
    Raises ChangedWhileRead, or OSError when the file cannot be opened (FileNotFoundError: it
    is gone); any other failure to read it is recorded and returned."""
    kept = _vectors_by_text(conn, previous_id) if previous_id is not None else {}
    try:
        with transaction(conn):
            return _write(conn, collection_id, found, sha256, kept)
    except ChangedWhileRead:
        if previous_id is None:
            record_failure(conn, collection_id, found, sha256, CHANGED_WHILE_READ)
        raise
    except UnreadableDocument as error:
        return record_failure(conn, collection_id, found, sha256, str(error))
    except (OSError, SyncCancelled):
        raise
    except Exception as error:  # a parser's bug must not stop the folder's other files
        _log.exception("Reading %s for the knowledge index failed", found.path)
        return record_failure(
            conn, collection_id, found, sha256, f"It could not be read: {error!r}."
        )


def _write(
    conn: sqlite3.Connection,
    collection_id: int,
    found: FoundFile,
    sha256: str,
    kept: dict[str, list[tuple[str, bytes]]],
) -> Written:
    document_id = _document_row(conn, collection_id, found, sha256, DocumentState.INDEXED, None)
    conn.execute("DELETE FROM chunks WHERE document = ?", (document_id,))
    chunker = Chunker()
    batch: list[Chunk] = []
    count = 0
    for chunk in chunker.chunks(document_blocks(Path(found.path), found.format)):
        batch.append(chunk)
        if len(batch) >= _INSERT_BATCH:
            _insert(conn, document_id, batch)
            count += len(batch)
            batch = []
    _insert(conn, document_id, batch)
    count += len(batch)
    after = os.stat(found.path)
    if (after.st_size, after.st_mtime_ns) != (found.size, found.mtime_ns):
        raise ChangedWhileRead(found.path)
    state, reason = DocumentState.INDEXED, None
    if not count:
        state, reason = DocumentState.NO_TEXT, no_text_reason(found.format, found.size)
    conn.execute(
        "UPDATE documents SET state = ?, failure = ?, text_sha256 = ?, chars = ? WHERE id = ?",
        (state.value, reason, chunker.sha256, chunker.length, document_id),
    )
    if kept:
        _reattach(conn, collection_id, document_id, kept)
    catalog.changed(conn, collection_id)
    return Written(state, count, reason)


def _document_row(
    conn: sqlite3.Connection,
    collection_id: int,
    found: FoundFile,
    sha256: str,
    state: DocumentState,
    failure: str | None,
) -> int:
    (document_id,) = conn.execute(
        "INSERT INTO documents (collection, path, format, size, mtime_ns, sha256, state,"
        " failure, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (collection, path) DO UPDATE SET format = excluded.format,"
        " size = excluded.size, mtime_ns = excluded.mtime_ns, sha256 = excluded.sha256,"
        " state = excluded.state, failure = excluded.failure, text_sha256 = '', chars = 0,"
        " indexed_at = excluded.indexed_at RETURNING id",
        (
            collection_id,
            found.path,
            found.format.value,
            found.size,
            found.mtime_ns,
            sha256,
            state.value,
            failure,
            time.time(),
        ),
    ).fetchone()
    return document_id


def _insert(conn: sqlite3.Connection, document_id: int, chunks: list[Chunk]) -> None:
    conn.executemany(
        "INSERT INTO chunks (document, seq, page, heading, span_start, span_end, text)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(document_id, c.seq, c.page, c.heading, c.start, c.end, c.text) for c in chunks],
    )


def record_failure(
    conn: sqlite3.Connection, collection_id: int, found: FoundFile, sha256: str, reason: str
) -> Written:
    with transaction(conn):
        document_id = _document_row(
            conn, collection_id, found, sha256, DocumentState.FAILED, reason
        )
        conn.execute("DELETE FROM chunks WHERE document = ?", (document_id,))
        catalog.changed(conn, collection_id)
    return Written(DocumentState.FAILED, 0, reason)


def _vectors_by_text(
    conn: sqlite3.Connection, document_id: int
) -> dict[str, list[tuple[str, bytes]]]:
    """The vectors of a document's chunks, by chunk text and model: kept for the chunks a
    changed file still has."""
    kept: dict[str, list[tuple[str, bytes]]] = defaultdict(list)
    rows = conn.execute(
        "SELECT c.text, v.model, v.vector FROM chunks AS c JOIN vectors AS v ON v.chunk = c.id"
        " WHERE c.document = ?",
        (document_id,),
    )
    for text, model, vector in rows:
        kept[text].append((model, vector))
    return kept


def _reattach(
    conn: sqlite3.Connection,
    collection_id: int,
    document_id: int,
    kept: dict[str, list[tuple[str, bytes]]],
) -> None:
    rows = conn.execute("SELECT id, text FROM chunks WHERE document = ?", (document_id,))
    conn.executemany(
        "INSERT OR IGNORE INTO vectors (chunk, model, collection, vector) VALUES (?, ?, ?, ?)",
        [
            (chunk_id, model, collection_id, vector)
            for chunk_id, text in rows.fetchall()
            for model, vector in kept.get(text, ())
        ],
    )
