"""Which files a knowledge folder reads, by extension, and the parser for each.

A file is opened read-only, once, and streamed: `document_blocks` is a generator that holds the
file open while its blocks are consumed and closes it when done (or when the consumer stops).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import BinaryIO

from app.knowledge.parsing.blocks import Block
from app.knowledge.parsing.html_text import html_blocks
from app.knowledge.parsing.office import docx_blocks, epub_blocks
from app.knowledge.parsing.pdf_text import pdf_blocks
from app.knowledge.parsing.tabular import csv_blocks, json_blocks
from app.knowledge.parsing.text_files import markdown_blocks, plain_blocks, read_text


class Format(StrEnum):
    TEXT = "text"
    MARKDOWN = "markdown"
    CODE = "code"
    CSV = "csv"
    JSON = "json"
    HTML = "html"
    PDF = "pdf"
    DOCX = "docx"
    EPUB = "epub"


_BY_SUFFIX: dict[str, Format] = {
    **dict.fromkeys((".txt", ".text", ".log", ".rst", ".org", ".tex", ".adoc"), Format.TEXT),
    **dict.fromkeys((".md", ".markdown", ".mdown", ".mkd", ".mdx"), Format.MARKDOWN),
    **dict.fromkeys(
        (
            ".py", ".pyi", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".c", ".h", ".cc",
            ".cpp", ".cxx", ".hpp", ".hh", ".m", ".mm", ".swift", ".rs", ".go", ".java", ".kt",
            ".kts", ".scala", ".rb", ".php", ".cs", ".fs", ".lua", ".pl", ".r", ".jl", ".dart",
            ".sh", ".bash", ".zsh", ".fish", ".ps1", ".sql", ".css", ".scss", ".less", ".vue",
            ".svelte", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".xml", ".proto",
            ".graphql", ".ex", ".exs", ".erl", ".hs", ".ml", ".clj", ".zig", ".nim", ".el",
        ),
        Format.CODE,
    ),
    **dict.fromkeys((".csv", ".tsv"), Format.CSV),
    **dict.fromkeys((".jsonl", ".ndjson"), Format.TEXT),
    ".json": Format.JSON,
    **dict.fromkeys((".html", ".htm", ".xhtml"), Format.HTML),
    ".pdf": Format.PDF,
    ".docx": Format.DOCX,
    ".epub": Format.EPUB,
}  # fmt: skip

SUFFIXES = frozenset(_BY_SUFFIX)


def format_of(path: Path) -> Format | None:
    """The format a file is read as, or None for a file a knowledge folder leaves out."""
    return _BY_SUFFIX.get(path.suffix.lower())


_Parser = Callable[[BinaryIO, int], Iterator[Block]]
_PARSERS: dict[Format, _Parser] = {
    Format.TEXT: lambda raw, _size: plain_blocks(read_text(raw)),
    Format.CODE: lambda raw, _size: plain_blocks(read_text(raw)),
    Format.MARKDOWN: lambda raw, _size: markdown_blocks(read_text(raw)),
    Format.CSV: lambda raw, _size: csv_blocks(read_text(raw)),
    Format.JSON: json_blocks,
    Format.HTML: lambda raw, _size: html_blocks(read_text(raw)),
    Format.PDF: lambda raw, _size: pdf_blocks(raw),
    Format.DOCX: lambda raw, _size: docx_blocks(raw),
    Format.EPUB: lambda raw, _size: epub_blocks(raw),
}


def document_blocks(path: Path, kind: Format) -> Iterator[Block]:
    """The blocks of the file at `path` read as `kind`. Raises UnreadableDocument (why, for
    the person) or OSError, as the blocks are consumed."""
    with path.open("rb") as raw:
        size = raw.seek(0, 2)
        raw.seek(0)
        yield from _PARSERS[kind](raw, size)


def no_text_reason(kind: Format, size: int) -> str:
    """Why a document that parsed gave no text, for the person."""
    if size == 0:
        return "The file is empty."
    if kind is Format.PDF:
        return "It has no text layer (a scanned PDF?): its pages are only images."
    return "It holds no text."
