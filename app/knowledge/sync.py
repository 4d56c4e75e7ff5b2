"""An index run over one knowledge folder: list the folder, read what is new or changed, note
renames and deletions, then embed the chunks that have no vector yet.

A file whose size and modification time are unchanged is not opened. Otherwise its content hash
decides: the same bytes (a touched file) only update the stored time, the bytes of a file that
went away (a rename or a move) move that document and its chunks and vectors to the new path,
and anything else is read again (`document_writer`, one transaction per file, so a run stopped
by a cancel, a kill or a crash resumes after the last finished file). Files gone from the folder
are removed from the index only while the folder itself is there: a folder that disappears (an
unplugged disk) keeps its index and is marked offline.

The run passes the pause gate before each file and each batch of vectors, and stops at the
same places when cancelled.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.knowledge import catalog
from app.knowledge.database import sqlite_errors, transaction
from app.knowledge.document_writer import (
    CHANGED_WHILE_READ,
    ChangedWhileRead,
    file_sha256,
    record_failure,
    write_document,
)
from app.knowledge.embedder import Embedder
from app.knowledge.embedding_run import count_missing, embed_missing
from app.knowledge.pause import CancelFlag, Gate, PauseGate
from app.knowledge.progress_meter import ProgressMeter
from app.knowledge.records import (
    MAX_WATCHED,
    Collection,
    CollectionState,
    DocumentState,
    IndexPhase,
    IndexProgress,
    SyncCancelled,
    SyncReport,
)
from app.knowledge.scanning import FolderOffline, FoundFile, Scan, scan_folder

_log = logging.getLogger(__name__)
_REMOVE_BATCH = 200
_CANCELLED = "Indexing was cancelled; the files read so far stay indexed."


@dataclass(frozen=True, slots=True)
class _Known:
    id: int
    path: str
    size: int
    mtime_ns: int
    sha256: str
    state: DocumentState


@dataclass
class _Tally:
    added: int = 0
    changed: int = 0
    renamed: int = 0
    removed: int = 0
    unchanged: int = 0
    chunks: int = 0
    embedded: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)


def sync_collection(
    conn: sqlite3.Connection,
    name: str,
    *,
    embedder: Embedder | None = None,
    cancel: CancelFlag | None = None,
    gate: Gate | None = None,
    progress: Callable[[IndexProgress], None] | None = None,
    reading: Callable[[str, int], None] | None = None,
) -> SyncReport:
    """Bring the index of folder `name` up to date with its files. `reading(path, size)` is
    told of each file before it is read, and `reading("", 0)` once all are. Raises
    SyncCancelled when `cancel` is set, KnowledgeError on an unknown name or an index that
    refuses writes."""
    run = _Run(conn, catalog.collection(conn, name), embedder, cancel, gate, progress)
    return run.sync(reading)


def embed_collection(
    conn: sqlite3.Connection,
    name: str,
    embedder: Embedder,
    *,
    cancel: CancelFlag | None = None,
    gate: Gate | None = None,
    progress: Callable[[IndexProgress], None] | None = None,
) -> int:
    """Only the vectors: embed the chunks of folder `name` that have none of `embedder`'s
    model (after its files were read elsewhere); returns how many were embedded."""
    run = _Run(conn, catalog.collection(conn, name), embedder, cancel, gate, progress)
    return run.embed_only(embedder)


class _Run:
    def __init__(
        self,
        conn: sqlite3.Connection,
        collection: Collection,
        embedder: Embedder | None,
        cancel: CancelFlag | None,
        gate: Gate | None,
        progress: Callable[[IndexProgress], None] | None,
    ) -> None:
        self._conn = conn
        self._collection = collection
        self._embedder = embedder
        self._cancel: CancelFlag = cancel or threading.Event()
        self._gate: Gate = gate or PauseGate()
        self._meter = ProgressMeter(collection.name, progress)
        self._tally = _Tally()
        self._skipped: tuple[tuple[str, str], ...] = ()
        self._folders: tuple[str, ...] = ()

    def sync(self, reading: Callable[[str, int], None] | None) -> SyncReport:
        cid = self._collection.id
        self._meter.start_phase(IndexPhase.SCANNING, 0)
        try:
            scan = scan_folder(
                Path(self._collection.root), self._collection.follow_links, self._cancel
            )
        except FolderOffline:
            return self._offline()
        self._check_cancel()
        self._skipped = scan.skipped
        self._folders = scan.folders[:MAX_WATCHED]
        catalog.set_state(self._conn, cid, CollectionState.INDEXING)
        if self._embedder is not None:
            self._set_model(self._embedder)
        missing = self._read_changes(scan, reading)
        if missing:
            if not Path(self._collection.root).exists():
                return self._offline()
            self._remove(missing)
        if self._embedder is not None:
            self._embed(self._embedder)
        catalog.set_state(self._conn, cid, CollectionState.READY, synced=True)
        self._meter.start_phase(IndexPhase.DONE, 0)
        return self._report(CollectionState.READY)

    def embed_only(self, embedder: Embedder) -> int:
        self._set_model(embedder)
        self._embed(embedder)
        catalog.set_state(self._conn, self._collection.id, CollectionState.READY, synced=True)
        self._meter.start_phase(IndexPhase.DONE, 0)
        return self._tally.embedded

    def _set_model(self, embedder: Embedder) -> None:
        with transaction(self._conn):
            self._conn.execute(
                "UPDATE collections SET embedding_model = ? WHERE id = ?",
                (embedder.model_id, self._collection.id),
            )

    def _check_cancel(self) -> None:
        if self._cancel.is_set():
            raise SyncCancelled(_CANCELLED)

    def _pass_gate(self) -> None:
        if self._gate.paused:
            self._meter.paused = True
            self._meter.tick(force=True)
            self._meter.waited(self._gate.wait(self._cancel))
            self._meter.paused = False
        self._check_cancel()

    def _read_changes(
        self, scan: Scan, reading: Callable[[str, int], None] | None
    ) -> dict[str, _Known]:
        """Read the new and changed files; return the known documents whose files are gone."""
        known = self._known()
        todo = sorted(
            path
            for path, found in scan.files.items()
            if path not in known
            or (known[path].size, known[path].mtime_ns) != (found.size, found.mtime_ns)
        )
        self._tally.unchanged = len(scan.files) - len(todo)
        missing = {
            path: row
            for path, row in known.items()
            if path not in scan.files and not scan.may_hold(path)
        }
        moved_from = {(row.size, row.sha256): row for row in missing.values()}
        self._meter.files_total = len(todo)
        self._meter.start_phase(IndexPhase.READING, sum(scan.files[p].size for p in todo))
        for path in todo:
            self._pass_gate()
            found = scan.files[path]
            if reading is not None:
                reading(path, found.size)
            self._meter.current = path
            self._meter.tick()
            self._read(found, known.get(path), moved_from, missing)
            self._meter.files_done += 1
            self._meter.worked(found.size)
            self._meter.failures = len(self._tally.failed)
            self._meter.chunks = self._tally.chunks
            self._meter.tick()
        if reading is not None:
            reading("", 0)
        return missing

    def _read(
        self,
        found: FoundFile,
        row: _Known | None,
        moved_from: dict[tuple[int, str], _Known],
        missing: dict[str, _Known],
    ) -> None:
        try:
            sha256 = file_sha256(found.path, self._cancel)
            if row is not None and row.sha256 == sha256 and row.state is not DocumentState.FAILED:
                self._update(row.id, "size = ?, mtime_ns = ?", (found.size, found.mtime_ns))
                self._tally.unchanged += 1
                return
            moved = moved_from.pop((found.size, sha256), None) if row is None else None
            if moved is not None:
                missing.pop(moved.path)
                self._update(
                    moved.id,
                    "path = ?, size = ?, mtime_ns = ?",
                    (found.path, found.size, found.mtime_ns),
                )
                self._tally.renamed += 1
                return
            written = write_document(
                self._conn, self._collection.id, found, sha256, row.id if row else None
            )
        except FileNotFoundError:  # gone since the folder was listed
            if row is not None:
                missing[row.path] = row
            return
        except ChangedWhileRead:
            self._tally.failed.append((found.path, CHANGED_WHILE_READ))
            return
        except OSError as error:
            reason = f"It could not be read: {error.strerror or error}."
            record_failure(self._conn, self._collection.id, found, "", reason)
            self._tally.failed.append((found.path, reason))
            return
        if row is None:
            self._tally.added += 1
        else:
            self._tally.changed += 1
        self._tally.chunks += written.chunks
        if written.failure is not None:
            self._tally.failed.append((found.path, written.failure))

    def _update(self, document_id: int, columns: str, args: tuple[object, ...]) -> None:
        with transaction(self._conn):
            self._conn.execute(f"UPDATE documents SET {columns} WHERE id = ?", (*args, document_id))
            catalog.changed(self._conn, self._collection.id)

    def _known(self) -> dict[str, _Known]:
        with sqlite_errors():
            rows = self._conn.execute(
                "SELECT id, path, size, mtime_ns, sha256, state FROM documents"
                " WHERE collection = ?",
                (self._collection.id,),
            ).fetchall()
        return {
            path: _Known(did, path, size, mtime, sha, DocumentState(state))
            for did, path, size, mtime, sha, state in rows
        }

    def _remove(self, missing: dict[str, _Known]) -> None:
        ids = [row.id for row in missing.values()]
        for start in range(0, len(ids), _REMOVE_BATCH):
            self._pass_gate()
            batch = ids[start : start + _REMOVE_BATCH]
            with transaction(self._conn):
                self._conn.executemany("DELETE FROM documents WHERE id = ?", [(i,) for i in batch])
                catalog.changed(self._conn, self._collection.id)
            self._tally.removed += len(batch)

    def _embed(self, embedder: Embedder) -> None:
        cid = self._collection.id
        self._meter.to_embed = count_missing(self._conn, cid, embedder.model_id)
        self._meter.start_phase(IndexPhase.EMBEDDING, self._meter.to_embed)

        def done(count: int, waited: float) -> None:
            self._tally.embedded += count
            self._meter.embedded = self._tally.embedded
            self._meter.waited(waited)
            self._meter.worked(count)
            self._meter.tick()

        try:
            embed_missing(self._conn, cid, embedder, self._cancel, self._gate, done)
        except SyncCancelled:
            raise
        except Exception:
            # The text index is complete: the folder is searchable while the vectors wait.
            catalog.set_state(self._conn, cid, CollectionState.READY, synced=True)
            raise

    def _offline(self) -> SyncReport:
        catalog.set_state(self._conn, self._collection.id, CollectionState.OFFLINE)
        _log.info("Knowledge folder %s is offline", self._collection.name)
        self._meter.start_phase(IndexPhase.DONE, 0)
        return self._report(CollectionState.OFFLINE)

    def _report(self, state: CollectionState) -> SyncReport:
        tally = self._tally
        return SyncReport(
            self._collection.name,
            state,
            tally.added,
            tally.changed,
            tally.renamed,
            tally.removed,
            tally.unchanged,
            tuple(tally.failed),
            self._skipped,
            tally.chunks,
            tally.embedded,
            self._folders,
        )
