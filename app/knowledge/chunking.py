"""A document's blocks cut into chunks: a few hundred tokens each, following headings and
paragraphs, with some overlap where a cut falls inside a paragraph.

Sizes are counted in characters (about four to a token of English text): cheap, and the chat
model's own count is taken later, when excerpts are budgeted. A chunk never spans a section
boundary (a heading, a page, a chapter); within a section it ends at the last paragraph end that
keeps it under MAX_CHARS, else at a line end, a sentence end or a space. Each chunk is an exact
span of the extracted text (`text == extracted[start:end]`); consecutive chunks touch or
overlap, and together they cover the whole text (white space between sections goes to the
chunk before), so the document's text can be put back together from its chunks.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from app.knowledge.parsing.blocks import Block

TARGET_CHARS = 1400  # about 350 tokens
MAX_CHARS = 2000  # about 500 tokens
MIN_CHARS = 500  # a cut inside a run of text comes after at least this much
OVERLAP_CHARS = 200  # repeated from a chunk cut mid-paragraph at the start of the next
_SENTENCE_END = re.compile(r"[.!?。！？][\"')\]»”’]?\s")
_CONTENT = re.compile(r"\S")
_SPACE = re.compile(r"\s")


@dataclass(frozen=True, slots=True)
class Chunk:
    seq: int  # its place in the document, from 0
    start: int
    end: int
    text: str
    page: int | None
    heading: str


class Chunker:
    """Cuts one document's blocks into chunks (`chunks`), and meanwhile digests the
    extracted text (`sha256`, `length`)."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256()
        self.length = 0
        self._buf = ""
        self._buf_start = 0  # offset of _buf[0] in the extracted text
        self._pos = 0  # where the next chunk starts in _buf
        self._breaks: list[int] = []  # paragraph ends in _buf
        self._page: int | None = None
        self._heading = ""
        self._held: Chunk | None = None  # the last chunk, kept back: white space may follow
        self._seq = 0

    @property
    def sha256(self) -> str:
        return self._digest.hexdigest()

    def chunks(self, blocks: Iterable[Block]) -> Iterator[Chunk]:
        for block in blocks:
            yield from self._add(block)
        yield from self._emit(self._pos, len(self._buf))
        if self._held is not None:
            yield self._held
            self._held = None

    def _add(self, block: Block) -> Iterator[Chunk]:
        self._digest.update(block.text.encode("utf-8", "surrogatepass"))
        self.length += len(block.text)
        if block.section or block.page != self._page:
            yield from self._emit(self._pos, len(self._buf))
        self._page, self._heading = block.page, block.heading
        self._compact()
        self._buf += block.text
        self._breaks.append(len(self._buf))
        while len(self._buf) - self._content_start() >= MAX_CHARS:
            cut = self._cut()
            next_start = cut if cut in self._breaks else self._overlap_start(cut)
            yield from self._emit(self._pos, cut)
            self._pos = next_start
        if len(self._buf) - self._content_start() >= TARGET_CHARS:
            yield from self._emit(self._pos, len(self._buf))

    def _compact(self) -> None:
        """Drop what is behind the next chunk's start: memory holds one chunk or so."""
        if self._pos:
            self._buf = self._buf[self._pos :]
            self._buf_start += self._pos
            self._breaks = [at - self._pos for at in self._breaks if at > self._pos]
            self._pos = 0

    def _content_start(self) -> int:
        """Where the next chunk's size is counted from: its start, or, before the first chunk,
        its first character that is not white space (leading blank lines go with it)."""
        if self._held is not None:
            return self._pos
        found = _CONTENT.search(self._buf, self._pos)
        return found.start() if found else len(self._buf)

    def _cut(self) -> int:
        """The end of the next chunk, in a run at least MAX_CHARS long."""
        start = self._content_start()
        low, high = start + MIN_CHARS, start + MAX_CHARS
        paragraph_ends = [at for at in self._breaks if low < at <= high]
        if paragraph_ends:
            return paragraph_ends[-1]
        line_end = self._buf.rfind("\n", low, high)
        if line_end >= 0:
            return line_end + 1
        sentence_ends = [m.end() for m in _SENTENCE_END.finditer(self._buf, low, high)]
        if sentence_ends:
            return sentence_ends[-1]
        return self._buf.rfind(" ", low, high) + 1 or high

    def _overlap_start(self, cut: int) -> int:
        """Where the chunk after a cut inside a paragraph starts: OVERLAP_CHARS back, at a word."""
        back = max(self._pos + 1, cut - OVERLAP_CHARS)
        space = _SPACE.search(self._buf, back, cut)
        return space.end() if space else cut

    def _emit(self, start: int, end: int) -> Iterator[Chunk]:
        """Hold back the chunk `_buf[start:end]`, handing on the one held before; white space
        alone extends the held chunk instead (or waits for the next chunk when none is held)."""
        if end <= start:
            return
        held = self._held
        held_end = held.end - self._buf_start if held is not None else start
        if not self._buf[max(start, held_end) : end].strip():
            if held is not None:
                extra = self._buf[held_end:end]
                self._held = replace(held, end=held.end + len(extra), text=held.text + extra)
                self._pos = end
            return
        if held is not None:
            yield held
        text = self._buf[start:end]
        offset = self._buf_start + start
        self._held = Chunk(self._seq, offset, offset + len(text), text, self._page, self._heading)
        self._seq += 1
        self._pos = end
