"""Each format read as text with its structure (headings, pages, columns), and each kind of bad
input refused with a reason before it can cost memory: an encrypted PDF, a zip bomb named
.docx, a forged zip directory, binary bytes behind a text extension. A long text streams."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from app.knowledge.chunking import Chunker
from app.knowledge.parsing import text_files
from app.knowledge.parsing.blocks import Block, UnreadableDocument
from app.knowledge.parsing.formats import Format, document_blocks, format_of
from tests.app.knowledge.documents import (
    docx_bytes,
    encrypted_pdf_bytes,
    epub_bytes,
    pdf_bytes,
    write,
    zip_bomb_bytes,
)


def _read(path: Path) -> list[Block]:
    kind = format_of(path)
    assert kind is not None
    return list(document_blocks(path, kind))


def _text(blocks: list[Block]) -> str:
    return "".join(block.text for block in blocks)


def test_markdown_headings_start_sections_and_code_fences_hold_none(tmp_path: Path) -> None:
    source = "Notes\n=====\n\nIntro.\r\n\r\n# Setup\nInstall it.\n\n```\n# a comment\n```\n"
    blocks = _read(write(tmp_path / "notes.md", source.encode()))
    assert _text(blocks) == source.replace("\r\n", "\n")
    assert [(b.heading, b.section) for b in blocks] == [
        ("Notes", True),
        ("Notes", False),
        ("Setup", True),
        ("Setup", False),
    ]


def test_text_in_a_windows_code_page_is_read_and_binary_behind_a_text_name_is_refused(
    tmp_path: Path,
) -> None:
    assert _text(_read(write(tmp_path / "old.txt", "Café crème".encode("cp1252")))) == "Café crème"
    with pytest.raises(UnreadableDocument, match="binary"):
        _read(write(tmp_path / "photo.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
    with pytest.raises(UnreadableDocument, match="binary"):
        _read(write(tmp_path / "blob.py", bytes(range(1, 32)) * 50))


def test_html_keeps_what_a_browser_shows(tmp_path: Path) -> None:
    page = (
        "<html><head><title>Tab</title><style>p {color: red}</style></head><body>"
        "<h2>Cats &amp; dogs</h2><p>Cats   purr.</p><script>steal()</script>"
        "<pre>a\n  b</pre></body></html>"
    )
    blocks = _read(write(tmp_path / "pets.html", page))
    assert _text(blocks) == "Cats & dogs\n\nCats purr.\n\na\n  b\n\n"
    assert {b.heading for b in blocks} == {"Cats & dogs"}


def test_csv_rows_keep_their_column_names_and_json_is_laid_out(tmp_path: Path) -> None:
    rows = "city,population\n" + "".join(f"town{i},{i}\n" for i in range(300))
    blocks = _read(write(tmp_path / "towns.csv", rows))
    assert _text(blocks) == rows and len(blocks) > 2
    assert {b.heading for b in blocks} == {"city,population"}
    blocks = _read(write(tmp_path / "config.json", '{"model": {"name": "tiny", "layers": 2}}'))
    assert _text(blocks) == '{\n "model": {\n  "name": "tiny",\n  "layers": 2\n }\n}\n'


def test_pdf_pages_keep_their_numbers_and_a_password_is_refused(tmp_path: Path) -> None:
    blocks = _read(write(tmp_path / "paper.pdf", pdf_bytes(["Abstract (short)", "", "Results"])))
    assert [(b.page, b.text.strip()) for b in blocks] == [
        (1, "Abstract (short)"),
        (2, ""),
        (3, "Results"),
    ]
    # Encrypted only against printing (no password to open): read as any other.
    restricted = write(tmp_path / "restricted.pdf", encrypted_pdf_bytes(["Open text"], ""))
    assert _text(_read(restricted)).strip() == "Open text"
    locked = write(tmp_path / "locked.pdf", encrypted_pdf_bytes(["Secret"], "hunter2"))
    with pytest.raises(UnreadableDocument, match="password"):
        _read(locked)


def test_damaged_and_truncated_pdfs_are_refused_with_the_reason(tmp_path: Path) -> None:
    whole = pdf_bytes(["Some text"])
    with pytest.raises(UnreadableDocument, match="cut short"):
        _read(write(tmp_path / "cut.pdf", whole[: len(whole) // 2]))
    with pytest.raises(UnreadableDocument, match="not a PDF"):
        _read(write(tmp_path / "fake.pdf", b"GIF89a" + b"\x00" * 100))
    with pytest.raises(UnreadableDocument, match="readable PDF"):
        _read(write(tmp_path / "garbage.pdf", b"%PDF-1.7\n" + b"\x07" * 500 + b"\n%%EOF\n"))


def test_docx_headings_by_style_name_and_epub_chapters_in_spine_order(tmp_path: Path) -> None:
    docx = docx_bytes([("Berschrift1", "Einleitung"), (None, "Erster Absatz.")])
    blocks = _read(write(tmp_path / "bericht.docx", docx))
    assert [(b.text, b.heading, b.section) for b in blocks] == [
        ("Einleitung\n\n", "Einleitung", True),
        ("Erster Absatz.\n\n", "Einleitung", False),
    ]
    book = epub_bytes([("a.xhtml", "<h1>One</h1><p>First.</p>"), ("b.xhtml", "<p>Second.</p>")])
    blocks = _read(write(tmp_path / "book.epub", book))
    assert _text(blocks) == "One\n\nFirst.\n\nSecond.\n\n"
    assert [b.section for b in blocks] == [True, False, True]


def test_zip_bombs_are_refused_from_their_directory_before_inflating(tmp_path: Path) -> None:
    bomb = write(tmp_path / "bomb.docx", zip_bomb_bytes("word/document.xml", 16 * 1024 * 1024))
    tracemalloc.start()
    try:
        with pytest.raises(UnreadableDocument, match="zip bomb"):
            _read(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024, "nothing was inflated"
    # A directory claiming more entries than any document has is refused before it is listed.
    forged = bytearray(epub_bytes([("a.xhtml", "<p>x</p>")]))
    end = forged.rfind(b"PK\x05\x06")
    forged[end + 8 : end + 12] = (60000).to_bytes(2, "little") * 2
    with pytest.raises(UnreadableDocument, match="60,000 files"):
        _read(write(tmp_path / "forged.epub", bytes(forged)))
    with pytest.raises(UnreadableDocument, match="not a readable EPUB"):
        _read(write(tmp_path / "text.epub", "just text"))


def test_a_long_text_streams_through_in_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The 500 MB case's code path with smaller pieces: what is held never grows with the file.
    monkeypatch.setattr(text_files, "PIECE_CHARS", 16 * 1024)
    paragraph = "A line of a very long log, written again and again.\n" * 8 + "\n"
    size = 4 * 1024 * 1024
    path = write(tmp_path / "huge.log", paragraph * (size // len(paragraph)))
    tracemalloc.start()
    try:
        chunker = Chunker()
        count = sum(1 for _ in chunker.chunks(document_blocks(path, Format.TEXT)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert chunker.length == path.stat().st_size and count > 2000
    assert peak < size / 16, f"{peak:,} bytes held to read {size:,}"
