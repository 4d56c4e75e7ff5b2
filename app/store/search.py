"""Full-text search over conversation titles and message text (SQLite FTS5, bm25 ranking).

What a person types is never passed to FTS5 as query syntax: every word becomes a quoted phrase
(so quotes, `*`, `-`, `AND`, `NEAR` and brackets are plain text) and the words must all occur.
The last word, while it is still being typed (no space after it) and at least
`MIN_PREFIX_CHARS` long, also matches as a prefix.

bm25 has to score every match before it can sort, which for a word found in most of 100,000
messages takes hundreds of milliseconds. Messages are therefore ranked among the
`RANKED_WINDOW` most recently written ones that match; a rarer word is ranked over all of them.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace

from app.store.records import InvalidInputError, SearchHit

RANKED_WINDOW = 1000
# Shorter prefixes match so many words that merging them costs more than the answer is worth.
MIN_PREFIX_CHARS = 3
# Snippet delimiters. Control characters that chat text practically never contains; the spans
# returned to callers carry no markers at all.
_OPEN, _CLOSE = "\x02", "\x03"
_ELLIPSIS = "…"
_SNIPPET_TOKENS = 16


def fts_query(text: str) -> str | None:
    """The FTS5 query for what a person typed, or None when it holds no searchable word."""
    text, words = _words(text)
    if not words:
        return None
    phrases = [_phrase(word) for word in words]
    if not text[-1].isspace() and len(words[-1]) >= MIN_PREFIX_CHARS:
        phrases[-1] += "*"
    return " ".join(phrases)


def fts_any_query(text: str, ignored: frozenset[str] = frozenset()) -> str | None:
    """An FTS5 query matching any of the words of `text` (each a quoted phrase), for recall
    where bm25 does the ranking: a question's words rarely all occur in the passage that
    answers it. Words in `ignored` (lower case: "the", "of") are left out unless nothing else
    is left. None when there is no searchable word."""
    _, words = _words(text)
    kept = [word for word in words if _bare(word) not in ignored] or words
    return " OR ".join(dict.fromkeys(_phrase(word) for word in kept)) or None


def _words(text: str) -> tuple[str, list[str]]:
    """`text` made safe for FTS5, and its words that hold a letter or a digit."""
    # FTS5 reads the query as a C string: a NUL would end it inside a quoted phrase.
    text = text.replace("\x00", " ")
    return text, [word for word in text.split() if any(ch.isalnum() for ch in word)]


def _bare(word: str) -> str:
    return "".join(ch for ch in word.lower() if ch.isalnum())


def _phrase(word: str) -> str:
    """`word` as a quoted phrase, so quotes, `*`, `-`, `AND`, `NEAR` and brackets are plain
    text to FTS5."""
    return '"' + word.replace('"', '""') + '"'


def search(
    conn: sqlite3.Connection, text: object, limit: object, project_id: int | None = None
) -> list[SearchHit]:
    """Best matches first, conversation titles and messages together; deleted conversations are
    left out, archived ones are kept; with `project_id`, only that project's chats. `text` and
    `limit` are checked here: a tool call's JSON reaches the store's search as it came."""
    if not isinstance(text, str):
        raise InvalidInputError(f"A search must be text, not {type(text).__name__}.")
    if not isinstance(limit, int) or limit < 1:
        raise InvalidInputError(f"The number of search results must be at least 1, not {limit!r}.")
    query = fts_query(text)
    if query is None:
        return []
    best = sorted(
        _title_hits(conn, query, limit, project_id) + _message_hits(conn, query, limit, project_id),
        key=lambda hit: hit.rank,
    )[:limit]
    snippets = _message_snippets(conn, query, [h.message_id for h in best if h.message_id])
    return [replace(h, spans=_spans(snippets[h.message_id])) if h.message_id else h for h in best]


def _title_hits(
    conn: sqlite3.Connection, query: str, limit: int, project_id: int | None
) -> list[SearchHit]:
    rows = conn.execute(
        "SELECT c.id, c.title, snippet(title_search, 0, ?, ?, ?, ?), f.rank"
        " FROM title_search AS f JOIN conversations AS c ON c.id = f.rowid"
        " WHERE title_search MATCH ? AND c.deleted_at IS NULL"
        " AND (? IS NULL OR c.project_id = ?) ORDER BY f.rank LIMIT ?",
        (_OPEN, _CLOSE, _ELLIPSIS, _SNIPPET_TOKENS, query, project_id, project_id, limit),
    )
    return [
        SearchHit(cid, None, title, _spans(snippet), rank) for cid, title, snippet, rank in rows
    ]


def _message_hits(
    conn: sqlite3.Connection, query: str, limit: int, project_id: int | None
) -> list[SearchHit]:
    """Ranked hits without snippets: those are made only for the hits kept. Narrowed to a
    project, the messages of its chats are ranked (among all of them, the window aside)."""
    if project_id is not None:
        return _project_message_hits(conn, query, limit, project_id)
    window = conn.execute(
        "SELECT rowid FROM message_search WHERE message_search MATCH ?"
        " ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (query, RANKED_WINDOW - 1),
    ).fetchone()
    (hidden,) = conn.execute(
        "SELECT json_group_array(id) FROM messages WHERE conversation_id IN"
        " (SELECT id FROM conversations WHERE deleted_at IS NOT NULL)"
    ).fetchone()
    ranked = conn.execute(
        "SELECT rowid, rank FROM message_search WHERE message_search MATCH ? AND rowid >= ?"
        " AND rowid NOT IN (SELECT value FROM json_each(?)) ORDER BY rank LIMIT ?",
        (query, window[0] if window else 0, hidden, limit),
    ).fetchall()
    rank_of = dict(ranked)
    rows = conn.execute(
        "SELECT m.id, m.conversation_id, c.title FROM messages AS m"
        " JOIN conversations AS c ON c.id = m.conversation_id"
        " WHERE m.id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(rank_of)),),
    )
    return [SearchHit(cid, mid, title, (), rank_of[mid]) for mid, cid, title in rows]


def _project_message_hits(
    conn: sqlite3.Connection, query: str, limit: int, project_id: int
) -> list[SearchHit]:
    rows = conn.execute(
        "SELECT m.id, m.conversation_id, c.title, f.rank FROM message_search AS f"
        " JOIN messages AS m ON m.id = f.rowid JOIN conversations AS c"
        " ON c.id = m.conversation_id WHERE message_search MATCH ? AND c.project_id = ?"
        " AND c.deleted_at IS NULL ORDER BY f.rank LIMIT ?",
        (query, project_id, limit),
    )
    return [SearchHit(cid, mid, title, (), rank) for mid, cid, title, rank in rows]


def _message_snippets(conn: sqlite3.Connection, query: str, ids: list[int]) -> dict[int, str]:
    # One statement: SQLite hands FTS5 the ids one at a time, so no other match is visited.
    rows = conn.execute(
        "SELECT rowid, snippet(message_search, 0, ?, ?, ?, ?) FROM message_search"
        " WHERE message_search MATCH ? AND rowid IN (SELECT value FROM json_each(?))",
        (_OPEN, _CLOSE, _ELLIPSIS, _SNIPPET_TOKENS, query, json.dumps(ids)),
    )
    return dict(rows)


def _spans(snippet: str) -> tuple[tuple[str, bool], ...]:
    head, *marked = snippet.split(_OPEN)
    spans = [(head, False)]
    for part in marked:
        match, _, rest = part.partition(_CLOSE)
        spans += [(match, True), (rest, False)]
    return tuple((text, is_match) for text, is_match in spans if text)
