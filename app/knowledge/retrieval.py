"""What a new user message is given from knowledge folders: the best excerpts that fit a budget
counted in the chat model's own tokens.

The query is the new message and the previous user message together ("and in 2023?" means
nothing alone). Hits are taken best first: a file small enough goes in whole (at most
`whole_share` of the budget: its every line, not a few chunks of it), any other file gives at
most `per_document` chunks, so one long document cannot crowd out the rest; an excerpt that does
not fit is passed over for smaller ones below it. Chunks of one file next to each other (on the
same page) are then merged into one excerpt, their overlap taken once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.knowledge.catalog import spans_text
from app.knowledge.embedder import Embedder
from app.knowledge.excerpts import Excerpt, Retrieval
from app.knowledge.records import ChunkHit, Collection
from app.knowledge.search import search_chunks

CANDIDATES = 30
PER_DOCUMENT = 2
WHOLE_SHARE = 0.5
# A text of more characters than this many per token of the budget is never counted whole:
# no tokenizer packs text that densely, so counting it would only be slow.
_MAX_CHARS_PER_TOKEN = 8


@dataclass(frozen=True, slots=True)
class _Chosen:
    hit: ChunkHit
    whole: bool


def query_text(message: str, previous: str | None) -> str:
    return "\n".join(part for part in (previous, message) if part and part.strip())


def retrieve(
    conn: sqlite3.Connection,
    database: str,
    collections: Sequence[Collection],
    message: str,
    *,
    previous: str | None,
    count_tokens: Callable[[str], int],
    budget_tokens: int,
    embedder: Embedder | None = None,
    per_document: int = PER_DOCUMENT,
    whole_share: float = WHOLE_SHARE,
) -> Retrieval:
    query = query_text(message, previous)
    hits = search_chunks(conn, database, collections, query, CANDIDATES, embedder)
    chosen: list[_Chosen] = []
    counts: dict[int, int] = {}  # chunks taken per document; -1 once taken whole
    used = 0
    for hit in hits:
        taken = counts.get(hit.document_id)
        if taken == -1 or (taken or 0) >= per_document:
            continue
        room = budget_tokens - used
        if taken is None:
            whole = _whole(conn, hit, count_tokens, min(room, int(budget_tokens * whole_share)))
            if whole is not None:
                chosen.append(_Chosen(whole[0], True))
                counts[hit.document_id] = -1
                used += whole[1]
                continue
        tokens = count_tokens(hit.text)
        if tokens <= room:
            chosen.append(_Chosen(hit, False))
            counts[hit.document_id] = (taken or 0) + 1
            used += tokens
    excerpts = _merged(conn, chosen)
    return Retrieval(
        query,
        tuple(c.name for c in collections),
        tuple(excerpts),
        budget_tokens,
        sum(count_tokens(excerpt.text) for excerpt in excerpts),
    )


def _whole(
    conn: sqlite3.Connection, hit: ChunkHit, count_tokens: Callable[[str], int], room: int
) -> tuple[ChunkHit, int] | None:
    """The hit's whole document as one hit, and its tokens, if it fits in `room`."""
    if room <= 0 or hit.document_chars > room * _MAX_CHARS_PER_TOKEN:
        return None
    text = spans_text(conn, hit.document_id, 0, hit.document_chars)
    tokens = count_tokens(text)
    if tokens > room:
        return None
    whole = ChunkHit(
        hit.collection,
        hit.path,
        hit.document_id,
        hit.chunk_id,
        0,
        None,
        "",
        0,
        hit.document_chars,
        text,
        hit.score,
        hit.document_sha256,
        hit.document_chars,
    )
    return whole, tokens


def _merged(conn: sqlite3.Connection, chosen: list[_Chosen]) -> list[Excerpt]:
    """Excerpts best first, chunks of a file that touch (next in order, same page) as one."""
    by_document: dict[int, list[_Chosen]] = {}
    for choice in chosen:
        by_document.setdefault(choice.hit.document_id, []).append(choice)
    excerpts: list[Excerpt] = []
    for group in by_document.values():
        run: list[ChunkHit] = []
        for choice in sorted(group, key=lambda c: c.hit.seq):
            if choice.whole:
                excerpts.append(_excerpt(choice.hit, choice.hit.text, whole=True))
                continue
            hit = choice.hit
            if run and (hit.seq != run[-1].seq + 1 or hit.page != run[-1].page):
                excerpts.append(_run_excerpt(conn, run))
                run = []
            run.append(hit)
        if run:
            excerpts.append(_run_excerpt(conn, run))
    excerpts.sort(key=lambda e: (-e.score, e.path, e.start))
    return excerpts


def _run_excerpt(conn: sqlite3.Connection, run: list[ChunkHit]) -> Excerpt:
    first, last = run[0], run[-1]
    if len(run) == 1:
        return _excerpt(first, first.text)
    text = spans_text(conn, first.document_id, first.start, last.end)
    best = max(hit.score for hit in run)
    return Excerpt(
        first.collection,
        first.path,
        first.page,
        first.heading,
        first.start,
        last.end,
        text,
        best,
        first.document_sha256,
    )


def _excerpt(hit: ChunkHit, text: str, whole: bool = False) -> Excerpt:
    return Excerpt(
        hit.collection,
        hit.path,
        hit.page,
        hit.heading,
        hit.start,
        hit.end,
        text,
        hit.score,
        hit.document_sha256,
        whole_document=whole,
    )
