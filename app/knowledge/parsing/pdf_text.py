"""A PDF's text layer, page by page, with pypdf.

pypdf rather than pypdfium2 (both are dependencies already): it is pure Python, so a hostile or
damaged PDF can raise but never crash the process, and it is safe on the indexing thread while
another thread uses PDFium (which is not thread-safe) for the pages of an attached scan; it caps
what a stream may inflate to (a Flate bomb stops at its limit); and the attachments already read
PDF text with it, so a file reads the same attached or indexed. PDFium extracts text faster;
indexing runs in the background, paused while a reply generates, where speed matters less than
never taking the app down.

Each page is a block of its own, a section with its page number. A PDF without the header a PDF
starts with, or without the end marker a complete one ends with (a download cut short), is
refused before it is parsed; one encrypted with a password is refused, one encrypted without
(only to restrict printing or copying) is read.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import BinaryIO

from app.knowledge.parsing.blocks import Block, UnreadableDocument

_log = logging.getLogger(__name__)
_HEADER = b"%PDF-"
_HEADER_WITHIN = 1024
_END_MARKER = b"%%EOF"
# Some writers put padding or a few bytes of junk after the last end marker.
_END_WITHIN = 4096


def pdf_blocks(raw: BinaryIO) -> Iterator[Block]:
    _check_whole(raw)
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(raw, strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableDocument("It is password-protected; its text cannot be read.")
        pages = len(reader.pages)
    except UnreadableDocument:
        raise
    # A malformed file can fail deep inside the parser with any of these.
    except (PyPdfError, ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
        raise UnreadableDocument(f"It is not a readable PDF: {error}.") from error
    except NotImplementedError as error:  # an encryption pypdf does not know
        raise UnreadableDocument(
            f"It is encrypted in a way that cannot be read: {error}."
        ) from error
    failed = 0
    for number in range(1, pages + 1):
        try:
            text = reader.pages[number - 1].extract_text() or ""
        except (PyPdfError, ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
            _log.info("Page %d of a PDF could not be read: %s", number, error)
            failed += 1
            continue
        yield Block(text.strip() + "\n\n", page=number, section=True)
    if pages and failed == pages:
        raise UnreadableDocument("It is a damaged PDF: none of its pages could be read.")


def _check_whole(raw: BinaryIO) -> None:
    if _HEADER not in raw.read(_HEADER_WITHIN):
        raise UnreadableDocument("It is not a PDF (it lacks the %PDF header).")
    size = raw.seek(0, 2)
    raw.seek(max(0, size - _END_WITHIN))
    if _END_MARKER not in raw.read():
        raise UnreadableDocument("It is an incomplete PDF: its end is missing (cut short?).")
    raw.seek(0)
