"""Plain text, Markdown and source code, streamed: a file of any size is read a piece at a time
and cut into paragraphs, so memory stays bounded (a 500 MB log is indexed like a 5 kB note).

The encoding is chosen from the first 64 kB: a byte-order mark, else UTF-8 if that sample
decodes, else Windows-1252 (old Windows notes). A sample with a NUL byte or more than 1 % of
other control bytes is binary and refused (a `.txt` that is really an image). Later bytes that
do not decode become U+FFFD rather than failing a whole long file.
"""

from __future__ import annotations

import codecs
import io
import re
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from app.knowledge.parsing.blocks import Block, UnreadableDocument, heading_text

SAMPLE_BYTES = 64 * 1024
PIECE_CHARS = 1 << 20
# The longest run handed on as one paragraph: longer ones are cut at a line end.
MAX_SEGMENT_CHARS = 64 * 1024
_BINARY = "It holds binary data, not text."
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# Control bytes text does not hold (all but tab, newline, form feed, carriage return, escape).
_BINARY_CONTROLS = bytes(byte for byte in range(0x20) if byte not in b"\t\n\x0c\r\x1b")
_PARAGRAPH_END = re.compile(r"\n(?:[ \t]*\n)+")


def read_text(raw: BinaryIO) -> Iterator[str]:
    """The text of the open file `raw` in pieces, newlines as "\\n"; UnreadableDocument when it
    is binary. `raw` is left open (its owner closes it)."""
    encoding = _encoding(raw.read(SAMPLE_BYTES))
    raw.seek(0)
    reader = io.TextIOWrapper(raw, encoding=encoding, errors="replace", newline=None)
    try:
        while piece := reader.read(PIECE_CHARS):
            yield piece.replace("\x00", "")
    finally:
        reader.detach()


def _encoding(sample: bytes) -> str:
    for bom, encoding in _BOMS:
        if sample.startswith(bom):
            return encoding
    controls = len(sample) - len(sample.translate(None, _BINARY_CONTROLS))
    if b"\x00" in sample or controls * 100 > len(sample):
        raise UnreadableDocument(_BINARY)
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError:
        return "cp1252"
    return "utf-8"


def segments(pieces: Iterable[str]) -> Iterator[str]:
    """The text cut into paragraphs, each with the blank lines after it; joined, they give
    the text back exactly. None is longer than MAX_SEGMENT_CHARS."""
    rest = ""
    for piece in pieces:
        buffer = rest + piece
        start = 0
        for match in _PARAGRAPH_END.finditer(buffer):
            if match.end() == len(buffer):
                break  # the blank lines may go on in the next piece
            yield from _bounded(buffer[start : match.end()])
            start = match.end()
        rest = buffer[start:]
        while len(rest) > MAX_SEGMENT_CHARS:
            cut = _line_cut(rest)
            yield rest[:cut]
            rest = rest[cut:]
    if rest:
        yield from _bounded(rest)


def _bounded(segment: str) -> Iterator[str]:
    while len(segment) > MAX_SEGMENT_CHARS:
        cut = _line_cut(segment)
        yield segment[:cut]
        segment = segment[cut:]
    if segment:
        yield segment


def _line_cut(text: str) -> int:
    """Where to cut a run too long for one segment: after its last line end within bounds."""
    return text.rfind("\n", 0, MAX_SEGMENT_CHARS) + 1 or MAX_SEGMENT_CHARS


def plain_blocks(pieces: Iterable[str]) -> Iterator[Block]:
    """Plain text and source code: paragraph after paragraph."""
    return (Block(segment) for segment in segments(pieces))


_ATX_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]+(.*?))?[ \t#]*\n?")
_FENCE = re.compile(r" {0,3}(```|~~~)")
_SETEXT_LINE = re.compile(r" {0,3}(?:=+|-+)[ \t]*\n?")
_MAY_HOLD_STRUCTURE = re.compile(r"^ {0,3}(?:#|```|~~~)", re.MULTILINE)


def markdown_blocks(pieces: Iterable[str]) -> Iterator[Block]:
    """Markdown: paragraphs, with each heading (`#` lines, and a line underlined by `===` or
    `---`) starting a section that the blocks below it name; `#` lines inside fenced code are
    code, not headings."""
    heading = ""
    in_fence = False
    for segment in segments(pieces):
        if not in_fence and not _MAY_HOLD_STRUCTURE.search(segment):
            lines = segment.splitlines(keepends=True)
            if len(lines) >= 2 and lines[0].strip() and _SETEXT_LINE.fullmatch(lines[1]):
                heading = heading_text(lines[0])
                yield Block(segment, heading=heading, section=True)
            else:
                yield Block(segment, heading=heading)
            continue
        pending: list[str] = []
        section = False
        for line in segment.splitlines(keepends=True):
            if _FENCE.match(line):
                in_fence = not in_fence
            elif not in_fence and (match := _ATX_HEADING.fullmatch(line)):
                if pending:
                    yield Block("".join(pending), heading=heading, section=section)
                heading = heading_text(match.group(1) or "")
                pending, section = [], True
            pending.append(line)
        if pending:
            yield Block("".join(pending), heading=heading, section=section)
