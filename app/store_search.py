"""Full-text search over conversation titles and message text (SQLite FTS5, bm25 ranking).

What a person types is never passed to FTS5 as query syntax: every word becomes a quoted phrase
(so quotes, `*`, `-`, `AND`, `NEAR` and brackets are plain text), the words must all occur, and
the last word also matches as a prefix while it is still being typed.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace

from app.store_models import InvalidInputError, SearchHit

# Snippet delimiters. Control characters that chat text practically never contains; the spans
# returned to callers carry no markers at all.
_OPEN, _CLOSE = "\x02", "\x03"
_ELLIPSIS = "…"
_SNIPPET_TOKENS = 16


def fts_query(text: str) -> str | None:
    """The FTS5 query for what a person typed, or None when it holds no searchable word."""
    # FTS5 reads the query as a C string: a NUL would end it inside a quoted phrase.
    text = text.replace("\x00", " ")
    words = [word for word in text.split() if any(ch.isalnum() for ch in word)]
    if not words:
        return None
    phrases = ['"' + word.replace('"', '""') + '"' for word in words]
    if not text[-1].isspace():
        phrases[-1] += "*"
    return " ".join(phrases)


def search(conn: sqlite3.Connection, text: str, limit: int) -> list[SearchHit]:
    """Best matches first, conversation titles and messages together; deleted conversations are
    left out, archived ones are kept."""
    if not isinstance(text, str):
        raise InvalidInputError(f"A search must be text, not {type(text).__name__}.")
    if not isinstance(limit, int) or limit < 1:
        raise InvalidInputError(f"The number of search results must be at least 1, not {limit!r}.")
    query = fts_query(text)
    if query is None:
        return []
    title_hits = [
        SearchHit(conversation_id, None, title, _spans(snippet), rank)
        for conversation_id, title, snippet, rank in conn.execute(
            "SELECT c.id, c.title, snippet(title_search, 0, ?, ?, ?, ?), f.rank"
            " FROM title_search AS f JOIN conversations AS c ON c.id = f.rowid"
            " WHERE title_search MATCH ? AND c.deleted_at IS NULL ORDER BY f.rank LIMIT ?",
            (_OPEN, _CLOSE, _ELLIPSIS, _SNIPPET_TOKENS, query, limit),
        )
    ]
    # Snippets are made only for the hits kept: in one ranked query SQLite would build one for
    # every matching message before sorting.
    message_rows = conn.execute(
        "SELECT m.conversation_id, m.id, c.title, f.rank FROM message_search AS f"
        " JOIN messages AS m ON m.id = f.rowid JOIN conversations AS c ON c.id = m.conversation_id"
        " WHERE message_search MATCH ? AND c.deleted_at IS NULL ORDER BY f.rank LIMIT ?",
        (query, limit),
    ).fetchall()
    message_hits = [
        SearchHit(conversation_id, message_id, title, (), rank)
        for conversation_id, message_id, title, rank in message_rows
    ]
    best = sorted(title_hits + message_hits, key=lambda hit: hit.rank)[:limit]
    return [_with_snippet(conn, query, hit) if hit.message_id else hit for hit in best]


def _with_snippet(conn: sqlite3.Connection, query: str, hit: SearchHit) -> SearchHit:
    (snippet,) = conn.execute(
        "SELECT snippet(message_search, 0, ?, ?, ?, ?) FROM message_search"
        " WHERE message_search MATCH ? AND rowid = ?",
        (_OPEN, _CLOSE, _ELLIPSIS, _SNIPPET_TOKENS, query, hit.message_id),
    ).fetchone()
    return replace(hit, spans=_spans(snippet))


def _spans(snippet: str) -> tuple[tuple[str, bool], ...]:
    head, *marked = snippet.split(_OPEN)
    spans = [(head, False)]
    for part in marked:
        match, _, rest = part.partition(_CLOSE)
        spans += [(match, True), (rest, False)]
    return tuple((text, is_match) for text, is_match in spans if text)
