"""An excerpt in its context, read from the index alone: the chunks put back together give the
document's text exactly (however the chunker cut and overlapped them), a PDF's excerpt comes
with its whole page, any other with the text around it, and an index without the file, with
other text, or that cannot be read says why instead of raising."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from app.generation.knowledge_index import IndexKnowledge
from app.knowledge.catalog import merged_spans
from app.knowledge.chunking import Chunker
from app.knowledge.context import (
    CONTEXT_CHARS,
    ExcerptPlace,
    MissingContext,
    excerpt_context,
)
from app.knowledge.index import KnowledgeIndex
from app.knowledge.parsing.blocks import Block
from app.knowledge.records import ChunkHit
from tests.app.knowledge.documents import write
from tests.pdf_files import pdf_bytes

# Words, runs of spaces and line ends of every kind the chunker cuts at (a paragraph, a line, a
# sentence, a space), and long words it must cut inside of.
_PIECES = st.sampled_from(["tide", "pool.", "a", "table", "\n", "\n\n", "  ", "é", "🌊", "! "])
_LONG_WORD = st.integers(1, 2500).map(lambda n: "x" * n)
_BLOCK_TEXT = st.lists(st.one_of(_PIECES, _PIECES, _PIECES, _LONG_WORD), max_size=400).map(" ".join)
_BLOCKS = st.lists(
    st.tuples(_BLOCK_TEXT, st.integers(1, 3), st.booleans()), min_size=1, max_size=12
)


@settings(max_examples=60, deadline=None)
@given(_BLOCKS, st.data())
def test_merged_chunks_are_the_documents_text_exactly(
    blocks: list[tuple[str, int, bool]], data: st.DataObject
) -> None:
    pages = sorted(page for _, page, _ in blocks)  # pages only ever go forward
    parts = [
        Block(text, page=page, heading="", section=section)
        for (text, _, section), page in zip(blocks, pages, strict=True)
    ]
    text = "".join(part.text for part in parts)
    chunks = [(c.start, c.end, c.text) for c in Chunker().chunks(parts)]
    for start, end, piece in chunks:
        assert text[start:end] == piece, "a chunk is the extracted text at its span"
    if not text.strip():
        assert chunks == [], "white space alone makes no chunk"
        return
    assert merged_spans(chunks, 0, len(text)) == text, "they cover it, nothing repeated"
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    inside = [c for c in chunks if c[1] > start and c[0] < end]  # as `spans_text` selects
    assert merged_spans(inside, start, end) == text[start:end]


def _hit(index: KnowledgeIndex, word: str) -> ChunkHit:
    hits = index.search(["kb"], word)
    assert len(hits) == 1
    return hits[0]


def _place(hit: ChunkHit, **changes: object) -> ExcerptPlace:
    fields: dict[str, object] = dict(
        collection="kb",
        path=hit.path,
        page=hit.page,
        start=hit.start,
        end=hit.end,
        document_sha256=hit.document_sha256,
    )
    return ExcerptPlace(**{**fields, **changes})  # type: ignore[arg-type]


def _lines(word: str, count: int) -> str:
    return "\n".join(f"{word} line {n} of the survey, with its notes." for n in range(count))


def test_a_pdf_excerpt_comes_with_its_whole_page(tmp_path: Path, index: KnowledgeIndex) -> None:
    pages = [_lines("harbour", 20), _lines("lighthouse", 60) + "\nkeeper", _lines("dunes", 20)]
    write(tmp_path / "kb" / "survey.pdf", pdf_bytes(pages))
    index.add("kb", tmp_path / "kb")
    index.sync("kb")
    hit = _hit(index, "keeper")
    assert hit.page == 2
    found = index.excerpt_context(_place(hit))
    assert found.missing is None and found.whole_page
    assert found.text[found.start : found.end] == hit.text
    whole = index.read_document("kb", hit.path)
    assert found.text in whole and "harbour" not in found.text and "dunes" not in found.text
    assert found.text.count("lighthouse line") == 60, "the page whole, nothing repeated"
    assert found.before and found.after


def test_a_text_excerpt_comes_with_the_text_around_it(
    tmp_path: Path, index: KnowledgeIndex
) -> None:
    body = "\n\n".join(f"Paragraph {n} tells of the tide table, item {n}." for n in range(400))
    write(tmp_path / "kb" / "tides.txt", body.replace("item 200.", "item 200, the neap."))
    index.add("kb", tmp_path / "kb")
    index.sync("kb")
    hit = _hit(index, "neap")
    whole = index.read_document("kb", hit.path)
    found = index.excerpt_context(_place(hit))
    assert found.missing is None and not found.whole_page and found.before and found.after
    assert found.text[found.start : found.end] == hit.text
    low = hit.start - found.start
    assert found.text == whole[low : low + len(found.text)]
    assert found.start >= CONTEXT_CHARS and len(found.text) - found.end >= CONTEXT_CHARS
    assert len(found.text) < len(hit.text) + 4 * CONTEXT_CHARS + 2000, "whole chunks, no more"
    # Near the start of the document the text is clipped to it.
    first = index.excerpt_context(_place(hit, start=0, end=10, page=None))
    assert first.start == 0 and not first.before and first.text == whole[: len(first.text)]


def test_what_the_index_cannot_give_is_said(tmp_path: Path, index: KnowledgeIndex) -> None:
    write(tmp_path / "kb" / "note.txt", "The keeper's note.")
    index.add("kb", tmp_path / "kb")
    index.sync("kb")
    hit = _hit(index, "keeper")
    assert index.excerpt_context(_place(hit, path="/elsewhere.txt")).missing is MissingContext.GONE
    assert index.excerpt_context(_place(hit, collection="old")).missing is (
        MissingContext.FOLDER_GONE
    )
    changed = index.excerpt_context(_place(hit, document_sha256="0" * 64))
    assert changed.missing is MissingContext.CHANGED and changed.text == ""
    none = IndexKnowledge(tmp_path / "nowhere" / "knowledge.db")
    assert none.excerpt_context(_place(hit)).missing is MissingContext.NO_INDEX
    assert not (tmp_path / "nowhere").exists(), "nothing made where there was no index"
    with closing(sqlite3.connect(index.path)) as conn:
        conn.execute("DROP TABLE chunks")  # a damaged index
        damaged = excerpt_context(conn, _place(hit))
    assert damaged.missing is MissingContext.UNREADABLE and "chunks" in damaged.detail


def test_the_reads_go_through_the_documents_index(index: KnowledgeIndex) -> None:
    """The GUI thread may wait for these: each finds one document's chunks by the index on
    (document, seq), never by scanning the table."""
    with closing(sqlite3.connect(index.path)) as conn:
        for query in (
            "SELECT span_start, span_end, text FROM chunks WHERE document = 1 AND page = 2"
            " ORDER BY seq",
            "SELECT span_start, span_end, text FROM chunks WHERE document = 1"
            " AND span_end > 10 AND span_start < 20 ORDER BY seq",
            "SELECT id, chars, text_sha256 FROM documents WHERE collection = 1 AND path = 'a'",
        ):
            plan = " ".join(row[-1] for row in conn.execute(f"EXPLAIN QUERY PLAN {query}"))
            assert "USING INDEX" in plan and "SCAN" not in plan, plan
