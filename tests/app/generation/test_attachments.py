"""Reading attached files: each supported kind to text, a PDF made here, binary and unreadable
files refused by name, and the wrapper the prompt shows them in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.generation.attachments import (
    AttachmentError,
    read_attachment,
    with_attachments,
    wrap_file,
)
from app.sizes import format_size
from tests.pdf_files import pdf_bytes


def make_pdf(path: Path, lines: list[str]) -> Path:
    """A one-page PDF whose text layer holds `lines`."""
    path.write_bytes(pdf_bytes(["\n".join(lines)]))
    return path


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("notes.txt", "plain words\nsecond line"),
        ("README.md", "# Title\n\n- a point"),
        ("main.py", "def main():\n    return 0\n"),
        ("table.csv", "city,population\nParis,2100000\n"),
        ("data.json", json.dumps({"capital": "Paris"}, indent=2)),
        ("Makefile", "all:\n\techo hi\n"),  # no suffix: read as text if it is text
    ],
)
def test_text_kinds_are_read_as_they_are(tmp_path: Path, name: str, content: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    attached = read_attachment(path)
    assert (attached.name, attached.text, attached.size) == (name, content, path.stat().st_size)


def test_windows_line_ends_and_a_byte_order_mark_are_normalised(tmp_path: Path) -> None:
    path = tmp_path / "win.txt"
    path.write_bytes("\ufeffone\r\ntwo\r\n".encode())
    assert read_attachment(path).text == "one\ntwo\n"


def test_a_pdf_text_layer_is_extracted(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "report.pdf", ["Quarterly walrus report", "Sales rose"])
    text = read_attachment(path).text
    assert "Quarterly walrus report" in text and "Sales rose" in text


def test_a_pdf_without_text_or_a_broken_one_is_refused(tmp_path: Path) -> None:
    empty = make_pdf(tmp_path / "scan.pdf", [])
    with pytest.raises(AttachmentError, match=r"scan\.pdf has no text"):
        read_attachment(empty)
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\nthis is not really a pdf")
    with pytest.raises(AttachmentError, match=r"broken\.pdf"):
        read_attachment(broken)


@pytest.mark.parametrize("data", [b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", b"caf\xe9 latin-1"])
def test_binary_files_are_refused_by_name(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "photo.png"
    path.write_bytes(data)
    with pytest.raises(AttachmentError, match=r"photo\.png is a binary file"):
        read_attachment(path)


def test_missing_files_and_folders_are_refused(tmp_path: Path) -> None:
    with pytest.raises(AttachmentError, match=r"gone\.txt could not be read"):
        read_attachment(tmp_path / "gone.txt")
    with pytest.raises(AttachmentError, match="is not a file"):
        read_attachment(tmp_path)


def test_a_huge_file_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("app.generation.attachments.MAX_FILE_BYTES", 10)
    path = tmp_path / "big.log"
    path.write_text("x" * 11)
    with pytest.raises(AttachmentError, match=r"big\.log is too large to attach \(11 B"):
        read_attachment(path)


def test_a_scan_too_large_to_read_as_text_is_still_offered_as_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.generation.attachments import NoTextLayer
    from tests.pictures import scanned_pdf

    scan = scanned_pdf(tmp_path / "scan.pdf", 2)
    typed = make_pdf(tmp_path / "typed.pdf", ["Hello there"])
    monkeypatch.setattr("app.generation.attachments.MAX_FILE_BYTES", 10)
    with pytest.raises(NoTextLayer, match=r"scan\.pdf has no text to read"):
        read_attachment(scan)
    with pytest.raises(AttachmentError, match=r"typed\.pdf is too large to attach"):
        read_attachment(typed)


def test_the_wrapper_names_each_file_and_fences_it_safely() -> None:
    wrapped = wrap_file("snippet.md", "Use ```code``` fences")
    assert wrapped == "Attached file: snippet.md\n````markdown\nUse ```code``` fences\n````"
    files = [
        {"name": "a.py", "size": 1, "tokens": 1, "text": "x = 1"},
        {"name": "b.txt", "size": 1, "tokens": 1, "text": "hello"},
    ]
    content = with_attachments("Compare them", files)
    assert content == (
        "Attached file: a.py\n```python\nx = 1\n```\n\n"
        "Attached file: b.txt\n```\nhello\n```\n\nCompare them"
    )
    assert with_attachments("Just text", ()) == "Just text"


def test_sizes_read_naturally() -> None:
    assert [format_size(n) for n in (812, 14_540, 3_250_000)] == ["812 B", "14.2 KB", "3.1 MB"]
