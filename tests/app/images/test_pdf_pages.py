"""Scanned PDFs: pages with no text layer become images a vision model can read."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from app.images.pdf_pages import MAX_EDGE, PdfPagesError, outline, render_pages
from tests.app.generation.test_attachments import make_pdf
from tests.pictures import scanned_pdf


def test_a_scanned_pdf_has_pages_and_no_text(tmp_path: Path) -> None:
    found = outline(scanned_pdf(tmp_path / "scan.pdf", 3))
    assert (found.name, found.pages, found.has_text) == ("scan.pdf", 3, False)
    assert outline(make_pdf(tmp_path / "typed.pdf", ["Hello there"])).has_text


def test_a_page_range_renders_one_png_per_page(tmp_path: Path) -> None:
    pages = render_pages(scanned_pdf(tmp_path / "scan.pdf", 3), 2, 3)
    assert [name for name, _ in pages] == ["scan page 2.png", "scan page 3.png"]
    picture = Image.open(io.BytesIO(pages[0][1]))
    assert picture.format == "PNG" and max(picture.size) <= MAX_EDGE
    red, _, _ = picture.convert("RGB").getpixel((picture.width // 2, picture.height // 2))
    assert 30 <= red <= 50  # page 2's colour, not page 1's


def test_pages_outside_the_document_and_broken_files_are_refused(tmp_path: Path) -> None:
    scan = scanned_pdf(tmp_path / "scan.pdf", 2)
    with pytest.raises(PdfPagesError, match="has 2 pages; pages 2 to 3"):
        render_pages(scan, 2, 3)
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 not really")
    with pytest.raises(PdfPagesError, match=r"broken\.pdf is not a readable PDF"):
        outline(broken)
