"""The app's knowledge index (`app.knowledge.index.KnowledgeIndex`, at `knowledge.db` in the data
folder) as the chat and the local server read it (`KnowledgeBase`).

A connection to the index belongs to the thread that opened it, and this is asked from two: the
GUI thread (the collections, the digests of a chat's sources) and the inference worker (a turn's
retrieval, the knowledge tools); each opens its own on first use. Nothing is opened, and nothing
of the index is imported, while no index file exists: a person who never added a folder pays
nothing. Each folder's digests are read again only when its index has changed since (its
generation), so showing a long chat's sources costs one small query.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from app.generation.knowledge_retrieval import CountTokens, DocumentInfo
from app.knowledge.excerpts import Excerpt, Retrieval

if TYPE_CHECKING:
    from app.knowledge.embedder import Embedder
    from app.knowledge.index import KnowledgeIndex


def default_embedder() -> Callable[[], Embedder | None]:
    """The embedder the index uses by default (`app.knowledge.embedder.DEFAULT_EMBEDDER`, as
    `branchwise knowledge` does; None: BM25 alone), made once, when first searched with."""
    made: list[Embedder | None] = []

    def embedder() -> Embedder | None:
        if not made:
            from app.knowledge.embedder import DEFAULT_EMBEDDER, EMBEDDERS

            made.append(EMBEDDERS[DEFAULT_EMBEDDER]() if DEFAULT_EMBEDDER else None)
        return made[0]

    return embedder


class IndexKnowledge:
    """`embedder()` is the embedder searches fuse with BM25 (None: BM25 alone)."""

    def __init__(self, database: Path, embedder: Callable[[], Embedder | None] = lambda: None):
        self.database = database
        self._embedder = embedder
        self._local = threading.local()
        self._lock = threading.Lock()
        # folder name -> (its index's state when read, {path: digest of its text})
        self._digests: dict[str, tuple[tuple[int, float | None], dict[str, str]]] = {}

    def _index(self) -> KnowledgeIndex | None:
        """This thread's connection (None while there is no index file)."""
        index = getattr(self._local, "index", None)
        if index is None and self.database.is_file():
            from app.knowledge.index import KnowledgeIndex

            index = self._local.index = KnowledgeIndex.open(self.database)
        return index

    def collection_names(self) -> list[str]:
        index = self._index()
        return [c.name for c in index.collections()] if index is not None else []

    def retrieve(
        self,
        collections: Sequence[str],
        query: str,
        previous_user_message: str,
        budget_tokens: int,
        count_tokens: CountTokens,
    ) -> Retrieval:
        index = self._index()
        known = self._known(index, collections)
        if index is None or not known:
            return Retrieval(query, (), (), budget_tokens, 0)
        return index.retrieve(
            known,
            query,
            previous=previous_user_message or None,
            count_tokens=count_tokens,
            budget_tokens=budget_tokens,
            embedder=self._embedder(),
        )

    def current_digests(self, paths: Sequence[str]) -> dict[str, str]:
        index = self._index()
        if index is None:
            return {}
        held: dict[str, str] = {}
        for folder in index.collections():
            state = (folder.generation, folder.synced_at)
            with self._lock:
                known = self._digests.get(folder.name)
            if known is None or known[0] != state:
                documents = {d.path: d.text_sha256 for d in index.documents(folder.name)}
                known = (state, documents)
                with self._lock:
                    self._digests[folder.name] = known
            held.update(known[1])
        return {path: held[path] for path in paths if path in held}

    def documents(self, collections: Sequence[str]) -> list[DocumentInfo]:
        from app.knowledge.records import DocumentState

        index = self._index()
        return [
            DocumentInfo(name, d.path, d.text_sha256)
            for name in self._known(index, collections)
            if index is not None
            for d in index.documents(name)
            if d.state == DocumentState.INDEXED
        ]

    def document_excerpts(self, collections: Sequence[str], path: str) -> list[Excerpt]:
        index = self._index()
        for name in self._known(index, collections):
            assert index is not None
            found = {d.path: d for d in index.documents(name)}.get(path)
            if found is not None:
                text = index.read_document(name, path)
                digest = found.text_sha256
                return [Excerpt(name, path, None, "", 0, len(text), text, 0.0, digest, True)]
        return []

    def _known(self, index: KnowledgeIndex | None, names: Sequence[str]) -> list[str]:
        """The names the index holds, in the order asked (a removed one is skipped)."""
        held = {c.name for c in index.collections()} if index is not None else set()
        return [name for name in dict.fromkeys(names) if name in held]
