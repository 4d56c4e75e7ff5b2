"""A small knowledge index for the chat's tests: documents held in memory, split into paragraphs,
ranked by the words they share with the query (ties by path and position, so the same query
always finds the same excerpts), within the budget the chat counts. It fills the chat's
`KnowledgeBase` protocol as the real index (`app.knowledge`) does, and counts its calls."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from app.generation.knowledge_retrieval import DocumentInfo
from app.knowledge.context import ExcerptContext, ExcerptPlace, MissingContext, no_context
from app.knowledge.excerpts import Excerpt, Retrieval

_WORD = re.compile(r"\w+")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class FakeKnowledge:
    # collection -> {absolute path: text}; pages are separated by form feeds ("\f")
    collections: dict[str, dict[str, str]] = field(default_factory=dict)
    retrievals: list[tuple[tuple[str, ...], str, str, int]] = field(default_factory=list)
    fail: str | None = None  # a retrieval raises RuntimeError(fail)

    def collection_names(self) -> list[str]:
        return sorted(self.collections)

    def retrieve(
        self,
        collections: Sequence[str],
        query: str,
        previous_user_message: str,
        budget_tokens: int,
        count_tokens: Callable[[str], int],
    ) -> Retrieval:
        self.retrievals.append((tuple(collections), query, previous_user_message, budget_tokens))
        if self.fail is not None:
            raise RuntimeError(self.fail)
        words = {w.lower() for w in _WORD.findall(f"{previous_user_message} {query}")}
        ranked = sorted(
            (
                (-len(words & {w.lower() for w in _WORD.findall(chunk.text)}), chunk.path, i, chunk)
                for i, chunk in enumerate(self._chunks(collections))
            ),
            key=lambda row: row[:3],
        )
        found, used = [], 0
        for score, _path, _i, chunk in ranked:
            tokens = count_tokens(chunk.text)
            if score < 0 and used + tokens <= budget_tokens:
                found.append(Excerpt(**{**chunk.__dict__, "score": float(-score)}))
                used += tokens
        return Retrieval(query, tuple(collections), tuple(found), budget_tokens, used)

    def current_digests(self, documents: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
        held = {(name, p): t for name, docs in self.collections.items() for p, t in docs.items()}
        return {key: digest(held[key]) for key in documents if key in held}

    def excerpt_context(self, place: ExcerptPlace) -> ExcerptContext:
        """The excerpt's page (its offsets count from the page's start here), or the whole
        document; why not, as the index says it."""
        text = self.collections.get(place.collection, {}).get(place.path)
        if text is None:
            return no_context(MissingContext.GONE)
        if digest(text) != place.document_sha256:
            return no_context(MissingContext.CHANGED)
        pages = text.split("\f")
        page = pages[place.page - 1] if place.page is not None else text
        return ExcerptContext(page, place.start, place.end, place.page is not None)

    def documents(self, collections: Sequence[str]) -> list[DocumentInfo]:
        return [
            DocumentInfo(name, path, digest(text), text.count("\f") + 1 if "\f" in text else None)
            for name in collections
            for path, text in sorted(self.collections.get(name, {}).items())
        ]

    def document_excerpts(self, collections: Sequence[str], path: str) -> list[Excerpt]:
        return [c for c in self._chunks(collections) if c.path == path]

    def _chunks(self, collections: Sequence[str]) -> list[Excerpt]:
        chunks = []
        for name in collections:
            for path, text in sorted(self.collections.get(name, {}).items()):
                pages = text.split("\f")
                for number, page in enumerate(pages, start=1):
                    start = 0
                    for paragraph in page.split("\n\n"):
                        chunks.append(
                            Excerpt(
                                name,
                                path,
                                number if len(pages) > 1 else None,
                                "",
                                start,
                                start + len(paragraph),
                                paragraph,
                                0.0,
                                digest(text),
                            )
                        )
                        start += len(paragraph) + 2
        return chunks
