"""`KnowledgeIndex`: the knowledge index as the rest of the app uses it, at one database file
(`AppPaths.knowledge_database`), for the thread that opened it.

    with KnowledgeIndex.open(paths.knowledge_database) as index:
        index.add("Papers", Path("~/Papers"))
        index.sync("Papers", progress=show)           # or the operation, off the GUI thread
        retrieval = index.retrieve(["Papers"], "What did they measure?", previous=None,
                                   count_tokens=tokens, budget_tokens=3000)

Every method raises KnowledgeError (`app.knowledge.records`) with a message for the person on
a refusal: an unknown name, a missing folder, an index that cannot be written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

from app.knowledge import catalog, retrieval, scanning, search, sync
from app.knowledge.context import ExcerptContext, ExcerptPlace, excerpt_context
from app.knowledge.database import open_knowledge_database
from app.knowledge.document_writer import record_failure
from app.knowledge.embedder import Embedder
from app.knowledge.excerpts import Retrieval
from app.knowledge.pause import CancelFlag, Gate
from app.knowledge.records import (
    ChunkHit,
    Collection,
    CollectionStatus,
    DocumentInfo,
    IndexProgress,
    KnowledgeError,
    SyncReport,
)
from app.knowledge.vectors import VECTOR_CACHE


class KnowledgeIndex:
    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn: sqlite3.Connection | None = conn
        self.path = path

    @classmethod
    def open(cls, path: Path) -> KnowledgeIndex:
        return cls(open_knowledge_database(path), path)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise KnowledgeError("The knowledge index is closed.")
        return self._conn

    # -- folders -------------------------------------------------------------------------------

    def add(self, name: str, root: Path, follow_links: bool = False) -> Collection:
        """A new knowledge folder over `root` (a folder or one file), not yet indexed: `sync`
        indexes it. Links inside it are followed only with `follow_links`."""
        return catalog.add_collection(self._db(), name, root, follow_links)

    def collections(self) -> list[Collection]:
        return catalog.collections(self._db())

    def collection(self, name: str) -> Collection:
        return catalog.collection(self._db(), name)

    def remove(self, name: str) -> None:
        """Forget folder `name` and its index; its files are never touched."""
        found = catalog.collection(self._db(), name)
        catalog.remove_collection(self._db(), name)
        VECTOR_CACHE.forget(str(self.path), found.id)

    def status(self, name: str) -> CollectionStatus:
        return catalog.status(self._db(), name)

    def retry_failures(self, name: str) -> None:
        """Have the next `sync` read again the files of folder `name` that failed."""
        catalog.retry_failures(self._db(), name)

    def documents(self, name: str) -> list[DocumentInfo]:
        return catalog.documents(self._db(), name)

    def document(self, name: str, path: str) -> DocumentInfo | None:
        """The document at `path` in folder `name` as indexed now (None if it is not): its
        `text_sha256` against an excerpt's `document_sha256` says whether it changed since."""
        return catalog.document(self._db(), name, path)

    def read_document(self, name: str, path: str, start: int = 0, end: int | None = None) -> str:
        """The extracted text of the document at `path` (absolute, as listed), or characters
        `start` to `end` of it: what excerpts' spans point into."""
        return catalog.document_text(self._db(), name, path, start, end)

    def excerpt_context(self, place: ExcerptPlace) -> ExcerptContext:
        """The page (or the text around it) of the excerpt at `place`, as indexed now; an index
        that cannot be read, or that no longer holds that text, says why instead of raising."""
        return excerpt_context(self._db(), place)

    # -- indexing ------------------------------------------------------------------------------

    def sync(
        self,
        name: str,
        *,
        embedder: Embedder | None = None,
        cancel: CancelFlag | None = None,
        gate: Gate | None = None,
        progress: Callable[[IndexProgress], None] | None = None,
        reading: Callable[[str, int], None] | None = None,
    ) -> SyncReport:
        """Index what is new or changed in folder `name` (all of it the first time), then
        embed chunks without vectors when an `embedder` is given. Waits at `gate` while it is
        paused; raises SyncCancelled once `cancel` is set (what was indexed stays).
        `reading(path, size)` is told of each file before it is read."""
        return sync.sync_collection(
            self._db(),
            name,
            embedder=embedder,
            cancel=cancel,
            gate=gate,
            progress=progress,
            reading=reading,
        )

    def embed(
        self,
        name: str,
        embedder: Embedder,
        *,
        cancel: CancelFlag | None = None,
        gate: Gate | None = None,
        progress: Callable[[IndexProgress], None] | None = None,
    ) -> int:
        """Only the vectors: embed folder `name`'s chunks that have none of the embedder's
        model (its files were read by a `sync` without an embedder, in another process);
        returns how many."""
        return sync.embed_collection(
            self._db(), name, embedder, cancel=cancel, gate=gate, progress=progress
        )

    def mark_failed(self, name: str, path: str, reason: str) -> None:
        """Record the file at `path` in folder `name` as failed, `reason` saying why: it is
        passed over until it changes (a file that crashed the reader, say)."""
        found = scanning.found_file(Path(path))
        if found is not None:
            collection = catalog.collection(self._db(), name)
            record_failure(self._db(), collection.id, found, "", reason)

    # -- search --------------------------------------------------------------------------------

    def search(
        self,
        names: Sequence[str],
        query: str,
        k: int = 10,
        *,
        embedder: Embedder | None = None,
        per_document: int | None = None,
    ) -> list[ChunkHit]:
        """The `k` best chunks for `query` in the folders `names`, best first (BM25, fused
        with vectors when an `embedder` is given); at most `per_document` from one file."""
        if k < 1:
            raise KnowledgeError(f"The number of results must be at least 1, not {k}.")
        found = self._collections(names)
        return search.search_chunks(
            self._db(), str(self.path), found, query, k, embedder, per_document
        )

    def retrieve(
        self,
        names: Sequence[str],
        message: str,
        *,
        previous: str | None,
        count_tokens: Callable[[str], int],
        budget_tokens: int,
        embedder: Embedder | None = None,
        per_document: int = retrieval.PER_DOCUMENT,
    ) -> Retrieval:
        """Excerpts for a new user `message` (searched together with the `previous` user
        message) within `budget_tokens` counted by `count_tokens` (the chat model's count)."""
        return retrieval.retrieve(
            self._db(),
            str(self.path),
            self._collections(names),
            message,
            previous=previous,
            count_tokens=count_tokens,
            budget_tokens=budget_tokens,
            embedder=embedder,
            per_document=per_document,
        )

    def _collections(self, names: Sequence[str]) -> list[Collection]:
        return [catalog.collection(self._db(), name) for name in dict.fromkeys(names)]
