"""An excerpt in its context, as the knowledge index holds it: for a paged document (a PDF) the
whole of the excerpt's page, for any other the chunks around it, about CONTEXT_CHARS each side,
so a reply's source can be read where it stands without opening the file.

Only the index is read (a few queries on one document's chunks, found through the
`UNIQUE (document, seq)` index), never the person's file: the text is the extracted text the
excerpt's offsets point into, put back together from the chunks (`catalog.merged_spans`). When
the document is no longer indexed, or indexed with other text than the excerpt was taken from,
there is no context to show for it, and `ExcerptContext.missing` says why: the excerpt itself,
stored on the message, is then all that is known of what the reply read.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from enum import Enum

from app.knowledge.catalog import merged_spans
from app.knowledge.database import sqlite_errors
from app.knowledge.records import KnowledgeError

CONTEXT_CHARS = 2000  # of a document without pages, shown each side of the excerpt (at least)


class MissingContext(Enum):
    NO_INDEX = "no index"  # there is no knowledge index (never made, or its file removed)
    UNREADABLE = "unreadable"  # the index could not be read: `detail` says why
    FOLDER_GONE = "folder gone"  # the knowledge folder was removed
    GONE = "gone"  # the folder no longer holds the document
    CHANGED = "changed"  # the document was indexed again with other text since
    INCOMPLETE = "incomplete"  # its chunks do not cover the span (an index this app never writes)


@dataclass(frozen=True)
class ExcerptPlace:
    """Where an excerpt was taken from, as the message keeps it (`Excerpt`): its folder, file,
    page (None: not a paged document), its span in the document's extracted text, and the digest
    of that text."""

    collection: str
    path: str
    page: int | None
    start: int
    end: int
    document_sha256: str


@dataclass(frozen=True)
class ExcerptContext:
    """The text around an excerpt: its page (`whole_page`) or the chunks about it, the excerpt
    at `start`:`end` in it, and whether the document goes on `before` and `after` it. Empty,
    with `missing` saying why, when the index has no such text."""

    text: str = ""
    start: int = 0
    end: int = 0
    whole_page: bool = False
    before: bool = False
    after: bool = False
    missing: MissingContext | None = None
    detail: str = ""  # the index's own words, for UNREADABLE


def no_context(missing: MissingContext, detail: str = "") -> ExcerptContext:
    return ExcerptContext(missing=missing, detail=detail)


def excerpt_context(conn: sqlite3.Connection, place: ExcerptPlace) -> ExcerptContext:
    """The context of the excerpt at `place`, read from the index at `conn` (only read); never
    raises for an index that cannot be read, the context says so instead."""
    try:
        with sqlite_errors():
            return _context(conn, place)
    except KnowledgeError as error:
        return no_context(MissingContext.UNREADABLE, str(error))


def _context(conn: sqlite3.Connection, place: ExcerptPlace) -> ExcerptContext:
    folder = conn.execute("SELECT id FROM collections WHERE name = ?", (place.collection,))
    found = folder.fetchone()
    if found is None:
        return no_context(MissingContext.FOLDER_GONE)
    document = conn.execute(
        "SELECT id, chars, text_sha256 FROM documents WHERE collection = ? AND path = ?",
        (found[0], place.path),
    ).fetchone()
    if document is None:
        return no_context(MissingContext.GONE)
    document_id, chars, digest = document
    if digest != place.document_sha256:
        return no_context(MissingContext.CHANGED)
    start, end = max(0, place.start), min(chars, place.end)
    rows: list[tuple[int, int, str]] = []
    if place.page is not None:
        rows = conn.execute(
            "SELECT span_start, span_end, text FROM chunks WHERE document = ? AND page = ?"
            " ORDER BY seq",
            (document_id, place.page),
        ).fetchall()
    whole_page = bool(rows) and rows[0][0] <= start and end <= rows[-1][1]
    if not whole_page:  # no pages, or a span beyond its page's chunks: the chunks around it
        rows = conn.execute(
            "SELECT span_start, span_end, text FROM chunks WHERE document = ?"
            " AND span_end > ? AND span_start < ? ORDER BY seq",
            (document_id, start - CONTEXT_CHARS, end + CONTEXT_CHARS),
        ).fetchall()
    if not rows or rows[0][0] > start or rows[-1][1] < end:
        return no_context(MissingContext.INCOMPLETE)
    low, high = rows[0][0], rows[-1][1]
    text = merged_spans(rows, low, high)
    if len(text) != high - low:  # a gap between chunks: offsets past it would be wrong
        return no_context(MissingContext.INCOMPLETE)
    return ExcerptContext(text, start - low, end - low, whole_page, low > 0, high < chars)
