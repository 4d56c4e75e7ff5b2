"""Hybrid search over knowledge folders: BM25 over the chunks' text (FTS5) and, when an embedder
is given, exact vector search, fused by reciprocal rank fusion (k = 60, as GPT4All and the RRF
paper use): each chunk scores the sum of 1 / (60 + its rank) in each list it is in, so a chunk
both lists rank well beats one that only one list loves, and no score scale has to be tuned.

The text query matches any of the question's words (the passage answering a question rarely
holds all of them), common English words left out; bm25 does the ranking. The words are
quoted by the conversation search's own query builder (`app.store.search`), so nothing a person
types is read as FTS5 syntax. bm25 scores every chunk a query matches before it can sort them,
so chunks holding every word are ranked first (a query of specific words matches few chunks
and costs little), then chunks holding any. In a large index a word found in more than a tenth
of the chunks is left out of that second query (its weight in bm25 is small, and its matches
would cost most of the time), keeping at least the two rarest words.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import replace

from app.knowledge.database import sqlite_errors
from app.knowledge.embedder import Embedder
from app.knowledge.records import ChunkHit, Collection
from app.knowledge.vectors import VECTOR_CACHE
from app.store.search import fts_any_query

RRF_K = 60
# Each list contributes this many candidates to the fusion.
CANDIDATES = 50
# From this many chunks on, words in more than COMMON_SHARE of them are left out of a query.
PRUNE_FROM_CHUNKS = 20_000
COMMON_SHARE = 0.1
MIN_KEPT = 2  # words kept however common (the rarest)

# Left out of the any-word query: they match nearly every chunk and say nothing.
STOPWORDS = frozenset(
    {
        "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are",
        "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
        "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for",
        "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him",
        "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more",
        "most", "my", "no", "nor", "not", "of", "off", "on", "once", "only", "or", "other", "our",
        "ours", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that",
        "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those",
        "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when",
        "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your",
        "yours",
    }
)  # fmt: skip


def bm25_ranked(
    conn: sqlite3.Connection, collection_ids: Sequence[int], query: str, limit: int
) -> list[int]:
    """Chunk ids matching all words of `query`, then those matching any, best bm25 first in
    each."""
    match = fts_any_query(query, STOPWORDS)
    if match is None:
        return []
    collections = json.dumps(list(collection_ids))
    with sqlite_errors():
        ranked = _ranked(conn, match.replace(" OR ", " AND "), collections, limit)
        if len(ranked) < limit:
            seen = set(ranked)
            more = _ranked(conn, _selective(conn, match), collections, limit)
            ranked += [chunk_id for chunk_id in more if chunk_id not in seen]
    return ranked[:limit]


def _ranked(conn: sqlite3.Connection, match: str, collections: str, limit: int) -> list[int]:
    rows = conn.execute(
        "SELECT f.rowid FROM chunk_search AS f JOIN chunks AS c ON c.id = f.rowid"
        " JOIN documents AS d ON d.id = c.document WHERE chunk_search MATCH ?"
        " AND d.collection IN (SELECT value FROM json_each(?)) ORDER BY f.rank LIMIT ?",
        (match, collections, limit),
    ).fetchall()
    return [chunk_id for (chunk_id,) in rows]


def _selective(conn: sqlite3.Connection, match: str) -> str:
    """`match` (quoted phrases joined by OR) without the words too common to be worth ranking."""
    phrases = match.split(" OR ")  # a phrase is one word: it holds no space
    (chunks,) = conn.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()
    if chunks < PRUNE_FROM_CHUNKS or len(phrases) < 2:
        return match
    found = {
        phrase: conn.execute(
            "SELECT count(*) FROM chunk_search WHERE chunk_search MATCH ?", (phrase,)
        ).fetchone()[0]
        for phrase in phrases
    }
    rarest = sorted(phrases, key=found.__getitem__)
    kept = [p for p in rarest if found[p] <= chunks * COMMON_SHARE]
    return " OR ".join(kept if len(kept) >= MIN_KEPT else rarest[:MIN_KEPT])


def vector_ranked(
    conn: sqlite3.Connection,
    database: str,
    collections: Sequence[Collection],
    embedder: Embedder,
    query: str,
    limit: int,
) -> list[int]:
    """Chunk ids nearest the query's vector, nearest first, over the folders' vectors of the
    embedder's model (those embedded so far)."""
    vector = embedder.embed_query(query)
    found: list[tuple[int, float]] = []
    for collection in collections:
        matrix = VECTOR_CACHE.matrix(
            conn, database, collection.id, embedder.model_id, embedder.dimensions
        )
        found += matrix.nearest(vector, limit)
    found.sort(key=lambda hit: -hit[1])
    return [chunk_id for chunk_id, _ in found[:limit]]


def fuse(rankings: Iterable[Sequence[int]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal rank fusion: (chunk id, score), best first (ties: first seen first)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, chunk_id in enumerate(ranking, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: -item[1])


def search_chunks(
    conn: sqlite3.Connection,
    database: str,
    collections: Sequence[Collection],
    query: str,
    limit: int,
    embedder: Embedder | None = None,
    per_document: int | None = None,
) -> list[ChunkHit]:
    """The `limit` best chunks for `query` in `collections`, best first; at most
    `per_document` from one file when given."""
    ids = [c.id for c in collections]
    candidates = max(CANDIDATES, limit)
    rankings = [bm25_ranked(conn, ids, query, candidates)]
    if embedder is not None:
        rankings.append(vector_ranked(conn, database, collections, embedder, query, candidates))
    fused = fuse(rankings)
    rows = _hits(conn, [chunk_id for chunk_id, _ in fused])
    hits: list[ChunkHit] = []
    per_file: dict[int, int] = {}
    for chunk_id, score in fused:
        hit = rows.get(chunk_id)
        if hit is None:  # removed since the vectors were read
            continue
        taken = per_file.get(hit.document_id, 0)
        if per_document is not None and taken >= per_document:
            continue
        per_file[hit.document_id] = taken + 1
        hits.append(replace(hit, score=score))
        if len(hits) == limit:
            break
    return hits


def _hits(conn: sqlite3.Connection, chunk_ids: list[int]) -> dict[int, ChunkHit]:
    with sqlite_errors():
        rows = conn.execute(
            "SELECT col.name, d.path, d.id, c.id, c.seq, c.page, c.heading, c.span_start,"
            " c.span_end, c.text, d.text_sha256, d.chars FROM chunks AS c"
            " JOIN documents AS d ON d.id = c.document"
            " JOIN collections AS col ON col.id = d.collection"
            " WHERE c.id IN (SELECT value FROM json_each(?))",
            (json.dumps(chunk_ids),),
        ).fetchall()
    return {
        row[3]: ChunkHit(*row[:10], score=0.0, document_sha256=row[10], document_chars=row[11])
        for row in rows
    }
