"""Pages of a PDF as images, for scanned documents: a PDF whose pages hold no text layer can
still be read by a vision model, one image per page, rendered with pypdfium2 (PDFium, the
renderer of Chrome; Apache-2.0/BSD).

Rendering is bounded: at most MAX_PAGES pages per attachment and a page's longer side at most
MAX_EDGE pixels, so a huge page size cannot make a huge bitmap.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_PAGES = 50
DPI = 144  # twice the PDF's own 72 units per inch: small print stays legible
MAX_EDGE = 2048


class PdfPagesError(Exception):
    """A PDF whose pages cannot be rendered; the message names it and says why."""


@dataclass(frozen=True)
class PdfOutline:
    """What a person chooses pages from: how many there are and whether they hold text."""

    name: str
    pages: int
    has_text: bool


def outline(path: str | Path) -> PdfOutline:
    """The PDF's page count and whether any page has a text layer."""
    path = Path(path)
    with _opened(path) as document:
        has_text = any(
            document[index].get_textpage().get_text_range().strip()
            for index in range(len(document))
        )
        return PdfOutline(path.name, len(document), has_text)


def render_pages(path: str | Path, first: int, last: int) -> list[tuple[str, bytes]]:
    """Pages `first` to `last` (1-based, inclusive) as PNG files: (name, bytes) each, named
    after the document and the page."""
    path = Path(path)
    with _opened(path) as document:
        count = len(document)
        if not 1 <= first <= last <= count:
            raise PdfPagesError(
                f"{path.name} has {count} page{'s' if count != 1 else ''}; pages {first} to "
                f"{last} are not all in it."
            )
        if last - first + 1 > MAX_PAGES:
            raise PdfPagesError(f"At most {MAX_PAGES} pages can be attached at once.")
        rendered = []
        for number in range(first, last + 1):
            page = document[number - 1]
            width, height = page.get_size()
            scale = min(DPI / 72, MAX_EDGE / max(width, height, 1))
            picture = page.render(scale=scale).to_pil().convert("RGB")
            out = io.BytesIO()
            picture.save(out, format="PNG")
            rendered.append((f"{path.stem} page {number}.png", out.getvalue()))
        return rendered


@contextmanager
def _opened(path: Path) -> Iterator[Any]:
    """A PDFium document, closed after use; a file PDFium cannot read is a PdfPagesError."""
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as error:
        raise PdfPagesError(f"{path.name} is not a readable PDF: {error}.") from error
    except OSError as error:
        raise PdfPagesError(f"{path.name} could not be read: {error}.") from error
    try:
        yield document
    finally:
        document.close()
