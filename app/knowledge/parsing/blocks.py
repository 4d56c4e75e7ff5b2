"""What a parser hands the chunker: the document's extracted text as a stream of blocks.

The extracted text of a document is the concatenation of its blocks' `text`, in order; every
character offset the index keeps (a chunk's span, an excerpt's) is an offset into that text. A
block is a paragraph or less (parsers cut longer runs), so a file of any size streams through in
bounded memory.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Block:
    """A run of a document's text: a paragraph with the blank lines after it, a heading, a
    page's text. `heading` is the nearest heading above it ("" where there is none), `page` its
    page (1-based) in a paged format. `section` says a new part starts here (a heading, a page,
    a chapter): no chunk spans that boundary."""

    text: str
    page: int | None = None
    heading: str = ""
    section: bool = False


class UnreadableDocument(Exception):
    """A file that cannot be read as a document; the message says why, for the person (it is
    kept as the document's failure and listed in the folder's status)."""


# The longest heading kept with a chunk: a "heading" longer than this is prose.
MAX_HEADING_CHARS = 200


def heading_text(text: str) -> str:
    """A heading as chunks keep it: one line, trimmed, at most MAX_HEADING_CHARS."""
    return " ".join(text.split())[:MAX_HEADING_CHARS]
