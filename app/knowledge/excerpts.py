"""What a retrieval hands to a chat: excerpts of indexed documents, as plain values.

An `Excerpt` is stored on the user message it was retrieved for (`as_record`, read back by
`from_record`), so the turn's prompt is rendered from the stored text alone: a follow-up, a
regenerate or a branch switch renders it token for token as before, whatever happened to the file
since. `document_sha256` is the digest of the document's extracted text when the excerpt was
taken; a later index with another digest means the file "changed since".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

RECORD_KIND = "knowledge"


@dataclass(frozen=True)
class Excerpt:
    """A span of one indexed document: `start` and `end` are character offsets into the
    document's extracted text (on `page`, 1-based, for paged formats; None otherwise)."""

    collection: str  # the knowledge folder's name
    path: str  # absolute path of the file
    page: int | None
    heading: str  # the nearest heading above the span, "" where there is none
    start: int
    end: int
    text: str
    score: float  # the fused rank score; larger is better
    document_sha256: str
    whole_document: bool = False  # the file was small enough to go in whole

    def as_record(self) -> dict[str, Any]:
        """The form a message keeps: the fields by name, with `"kind": "knowledge"`."""
        return {"kind": RECORD_KIND, **asdict(self)}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Excerpt:
        """Read back what `as_record` wrote; a missing or mistyped field raises ValueError."""
        try:
            page = record["page"]
            return cls(
                collection=str(record["collection"]),
                path=str(record["path"]),
                page=None if page is None else int(page),
                heading=str(record["heading"]),
                start=int(record["start"]),
                end=int(record["end"]),
                text=str(record["text"]),
                score=float(record["score"]),
                document_sha256=str(record["document_sha256"]),
                whole_document=bool(record.get("whole_document", False)),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"Not a knowledge excerpt record: {error}") from error


def is_excerpt_record(record: Mapping[str, Any]) -> bool:
    return record.get("kind") == RECORD_KIND


@dataclass(frozen=True)
class Retrieval:
    """What one retrieval found for a query, best first, within the token budget it was given."""

    query: str
    collections: tuple[str, ...]
    excerpts: tuple[Excerpt, ...]
    budget_tokens: int
    used_tokens: int
