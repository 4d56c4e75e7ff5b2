"""Files attached to a message: read once into text, then wrapped into the prompt the same way
every time.

Text, Markdown, source code, CSV and JSON are read as UTF-8 (a byte-order mark allowed); a PDF's
text is extracted with pypdf. Anything else that is not text (a NUL byte, or bytes that are not
UTF-8) is refused by name. The text is stored with the message, so the conversation never reads
the file again: it survives the file being moved or deleted.

The wrapper puts each file ahead of the person's text as a fenced block headed by its name. It
depends on nothing but the stored text, so a later turn renders the earlier ones token for token
as before and the engine's cache reuses them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.sizes import format_size
from app.store.records import MAX_CONTENT_CHARS

# Read no further than this: a bigger file could never fit a model's context anyway.
MAX_FILE_BYTES = 32 * 1024 * 1024
KINDS_TEXT = "text, Markdown, source code, CSV, JSON and PDF"
_LANGUAGES = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".csv": "csv",
    ".tsv": "tsv",
    ".json": "json",
    ".py": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".rs": "rust",
    ".go": "go",
    ".java": "java",
    ".sh": "bash",
    ".html": "html",
    ".css": "css",
    ".sql": "sql",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".xml": "xml",
}


class AttachmentError(Exception):
    """A file that cannot be attached; the message says which and why, for the person."""


_SCANNED = "{name} has no text to read (a scanned PDF holds only images of its pages)."


class NoTextLayer(AttachmentError):
    """A PDF with no text to read: a scanned one, whose pages a vision model can read as images
    (app.images.pdf_pages)."""


@dataclass(frozen=True)
class AttachedFile:
    name: str
    size: int  # bytes on disk when it was attached
    text: str

    def as_record(self, tokens: int) -> dict[str, Any]:
        """The form the store keeps: {"name", "size", "tokens", "text"}."""
        return {"name": self.name, "size": self.size, "tokens": tokens, "text": self.text}


def read_attachment(path: str | Path) -> AttachedFile:
    """The file's text, or AttachmentError saying why it cannot be attached."""
    path = Path(path)
    name = path.name
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise AttachmentError(f"{name} is not a file.")
        pdf = path.suffix.lower() == ".pdf"
        if size > MAX_FILE_BYTES:
            # A scan is large for the little text it holds: its pages may still be offered.
            if pdf and _is_scan(path):
                raise NoTextLayer(_SCANNED.format(name=name))
            raise AttachmentError(
                f"{name} is too large to attach ({format_size(size)}; the limit is "
                f"{format_size(MAX_FILE_BYTES)})."
            )
        text = _pdf_text(path) if pdf else _plain_text(path)
    except OSError as exc:
        raise AttachmentError(f"{name} could not be read: {exc.strerror or exc}.") from exc
    if len(text) > MAX_CONTENT_CHARS:
        raise AttachmentError(f"{name} holds too much text to attach ({len(text):,} characters).")
    return AttachedFile(name, size, text)


def _is_scan(path: Path) -> bool:
    """Whether a PDF has pages and no text layer (read by PDFium, which reads only what it
    needs of a large file)."""
    from app.images.pdf_pages import PdfPagesError, outline

    try:
        found = outline(path)
    except PdfPagesError:
        return False
    return found.pages > 0 and not found.has_text


def _plain_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        if b"\x00" in data:
            raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL byte")
        return data.decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        raise AttachmentError(
            f"{path.name} is a binary file and cannot be attached; only {KINDS_TEXT} files can."
        ) from exc


def _pdf_text(path: Path) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            raise AttachmentError(f"{path.name} is password-protected; its text cannot be read.")
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    # A malformed file can fail deep inside the parser with any of these.
    except (PyPdfError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise AttachmentError(f"{path.name} is not a readable PDF: {exc}.") from exc
    text = "\n\n".join(page for page in pages if page)
    if not text:
        raise NoTextLayer(_SCANNED.format(name=path.name))
    return text


def fence_for(text: str) -> str:
    """A Markdown fence longer than any run of backticks inside `text` (so the text cannot
    close the block early)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def wrap_file(name: str, text: str) -> str:
    """One file as the prompt shows it: its name, then its text in a fence."""
    fence = fence_for(text)
    language = _LANGUAGES.get(Path(name).suffix.lower(), "")
    return f"Attached file: {name}\n{fence}{language}\n{text}\n{fence}"


def with_attachments(content: str, attachments: Sequence[dict[str, Any]]) -> str:
    """A message's text for the model: its attached files first, then what the person wrote.
    An imported file with no text (not in the export, or an image) has nothing to read, and an
    image goes to the model as an image (app.generation.prompt_messages): both left out, as
    are knowledge excerpts (app.generation.knowledge_block puts them ahead of all this)."""
    files = [
        wrap_file(item["name"], item["text"])
        for item in attachments
        if item.get("kind") is None
        and (item["text"] or not (item.get("missing") or item.get("file")))
    ]
    return "\n\n".join([*files, content]) if files else content
