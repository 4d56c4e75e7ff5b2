"""HTML (and the XHTML chapters of an EPUB) as text, with the standard library's parser.

What a browser would not show is dropped (scripts, styles, templates, the head); block elements
end paragraphs; `h1`-`h6` are headings that start sections; whitespace is collapsed as a browser
does, except inside `pre`. Nothing is fetched: links and images are only markup here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from html.parser import HTMLParser

from app.knowledge.parsing.blocks import Block, heading_text

_HIDDEN = frozenset({"script", "style", "template", "noscript", "head", "svg", "math", "iframe"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "br", "caption", "dd", "details",
        "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
        "header", "hr", "html", "li", "main", "nav", "ol", "p", "pre", "section", "summary",
        "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
    }
)  # fmt: skip
_SPACES = re.compile(r"\s+")
# Fed this many characters at a time, so a large page streams.
FEED_CHARS = 64 * 1024


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self._hidden = 0  # depth inside elements whose text is not shown
        self._pre = 0
        self._parts: list[str] = []
        self._size = 0
        self._in_heading = False
        self._heading = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self._hidden += 1
        elif tag in _HEADINGS:
            self._end_paragraph()
            self._in_heading = True
        elif tag in _BLOCKS:
            self._end_paragraph()
            self._pre += tag == "pre"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCKS:  # <br/>, <hr/>: a line of its own; nothing to close
            self._end_paragraph()

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        elif tag in _HEADINGS:
            self._end_paragraph()
        elif tag in _BLOCKS:
            self._end_paragraph()
            self._pre = max(0, self._pre - (tag == "pre"))

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self._parts.append(data if self._pre else _SPACES.sub(" ", data))
            self._size += len(data)
            if self._size > FEED_CHARS:  # a page of text with no element around its lines
                self._end_paragraph()

    def _end_paragraph(self) -> None:
        text = "".join(self._parts)
        self._parts, self._size = [], 0
        text = text.strip("\n") if self._pre else text.strip()
        heading, self._in_heading = self._in_heading, False
        if not text.strip():
            return
        if heading:
            self._heading = heading_text(text)
        self.blocks.append(Block(text + "\n\n", heading=self._heading, section=heading))

    def close(self) -> None:
        super().close()
        self._end_paragraph()


def html_blocks(pieces: Iterable[str]) -> Iterator[Block]:
    parser = _TextParser()
    for piece in pieces:
        for start in range(0, len(piece), FEED_CHARS):
            parser.feed(piece[start : start + FEED_CHARS])
            yield from parser.blocks
            parser.blocks.clear()
    parser.close()
    yield from parser.blocks
