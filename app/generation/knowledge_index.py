"""The app's knowledge index (`app.knowledge.index.KnowledgeIndex`, at `knowledge.db` in the data
folder) as the chat and the local server read it (`KnowledgeBase`).

A connection to the index belongs to the thread that opened it, and this is asked from two: the
GUI thread (the collections, the digests of a chat's sources, a source's page) and the inference
worker (a turn's retrieval, the knowledge tools); each opens its own on first use. Nothing is
opened, and nothing of the index is imported, while no index file exists: a person who never
added a folder pays nothing. A chat's sources are compared with the index one indexed lookup each.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from app.generation.knowledge_retrieval import CountTokens, DocumentInfo
from app.knowledge.excerpts import Excerpt, Retrieval

if TYPE_CHECKING:
    from app.knowledge.context import ExcerptContext, ExcerptPlace
    from app.knowledge.embedder import Embedder
    from app.knowledge.index import KnowledgeIndex


class IndexKnowledge:
    """`embedder()` is the embedder searches fuse with BM25 (None: BM25 alone): the one the
    index runs use (`app.knowledge.embedder_choice.PreferredEmbedder`), so a query meets the
    vectors of its own model."""

    def __init__(self, database: Path, embedder: Callable[[], Embedder | None] = lambda: None):
        self.database = database
        self._embedder = embedder
        self._local = threading.local()

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

    def current_digests(self, documents: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
        index = self._index()
        held = self._known(index, [name for name, _path in documents])
        found = {}
        for name, path in dict.fromkeys(documents):
            document = index.document(name, path) if index is not None and name in held else None
            if document is not None:
                found[name, path] = document.text_sha256
        return found

    def excerpt_context(self, place: ExcerptPlace) -> ExcerptContext:
        from app.knowledge.context import MissingContext, no_context

        index = self._index()
        if index is None:
            return no_context(MissingContext.NO_INDEX)
        return index.excerpt_context(place)

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
