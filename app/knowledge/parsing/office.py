"""DOCX and EPUB with the standard library: zip members read within limits (`zip_members`),
their XML parsed a piece at a time (`xml.etree`, expat with its entity-expansion limits;
external entities are never fetched).

DOCX: the paragraphs of `word/document.xml` in order, headings known by their style (the
style's name "heading N" or "Title" in `word/styles.xml`, which stays English in translated
Word, or an outline level). Deleted tracked changes are left out.

EPUB: the OPF package's spine, in reading order, each chapter through the HTML path; every
chapter starts a section.
"""

from __future__ import annotations

import codecs
import posixpath
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import BinaryIO
from urllib.parse import unquote

from app.knowledge.parsing.blocks import Block, UnreadableDocument, heading_text
from app.knowledge.parsing.html_text import html_blocks
from app.knowledge.parsing.zip_members import SafeZip

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"
_HEADING_NAME = re.compile(r"heading \d|title")
_HEADING_ID = re.compile(r"(?i)heading\d|title")
MAX_SMALL_XML_BYTES = 8 * 1024 * 1024  # styles, the EPUB container and package
_HTML_TYPES = frozenset({"application/xhtml+xml", "text/html"})
_FEED_BYTES = 64 * 1024


def docx_blocks(raw: BinaryIO) -> Iterator[Block]:
    archive = SafeZip(raw, "Word document")
    if "word/document.xml" not in archive:
        raise UnreadableDocument("It is not a Word document (it has no word/document.xml).")
    headings = _heading_styles(archive)
    heading = ""
    for paragraph in _elements(archive.pieces("word/document.xml"), _W + "p"):
        text = "".join(_runs(paragraph))
        is_heading = _is_heading(paragraph, headings)
        paragraph.clear()
        if text.strip():
            if is_heading:
                heading = heading_text(text)
            yield Block(text + "\n\n", heading=heading, section=is_heading)


def _elements(pieces: Iterable[bytes], tag: str) -> Iterator[ET.Element]:
    """Each `tag` element of the XML document in `pieces`, once it has ended (its caller
    clears it, so memory holds one at a time)."""
    parser = ET.XMLPullParser(events=("end",))
    try:
        for piece in pieces:
            # Fed in slices: expat keeps the GIL while it parses what it is given.
            for start in range(0, len(piece), _FEED_BYTES):
                parser.feed(piece[start : start + _FEED_BYTES])
                for event in parser.read_events():
                    element = event[-1]  # ("end", element): the only events asked for
                    if isinstance(element, ET.Element) and element.tag == tag:
                        yield element
        parser.close()
    except ET.ParseError as error:
        raise UnreadableDocument(f"Its XML is damaged: {error}.") from error


def _runs(paragraph: ET.Element) -> Iterator[str]:
    for element in paragraph.iter():
        if element.tag == _W + "t":
            yield element.text or ""
        elif element.tag == _W + "tab":
            yield "\t"
        elif element.tag in (_W + "br", _W + "cr"):
            yield "\n"


def _heading_styles(archive: SafeZip) -> frozenset[str]:
    """The ids of the paragraph styles that are headings."""
    if "word/styles.xml" not in archive:
        return frozenset()
    root = _small_xml(archive, "word/styles.xml")
    found = set()
    for style in root.iter(_W + "style"):
        name = style.find(_W + "name")
        style_id = style.get(_W + "styleId", "")
        named = name is not None and _HEADING_NAME.fullmatch(name.get(_W + "val", "").lower())
        if named or style.find(f"{_W}pPr/{_W}outlineLvl") is not None:
            found.add(style_id)
    return frozenset(found)


def _is_heading(paragraph: ET.Element, headings: frozenset[str]) -> bool:
    properties = paragraph.find(_W + "pPr")
    if properties is None:
        return False
    if properties.find(_W + "outlineLvl") is not None:
        return True
    style = properties.find(_W + "pStyle")
    style_id = "" if style is None else style.get(_W + "val", "")
    return style_id in headings or bool(not headings and _HEADING_ID.fullmatch(style_id))


def _small_xml(archive: SafeZip, name: str) -> ET.Element:
    try:
        return ET.fromstring(archive.read(name, MAX_SMALL_XML_BYTES))
    except ET.ParseError as error:
        raise UnreadableDocument(f"Its {name} is damaged: {error}.") from error


def epub_blocks(raw: BinaryIO) -> Iterator[Block]:
    archive = SafeZip(raw, "EPUB book")
    if "META-INF/container.xml" not in archive:
        raise UnreadableDocument("It is not an EPUB book (it has no META-INF/container.xml).")
    rootfile = _small_xml(archive, "META-INF/container.xml").find(f".//{_CONTAINER}rootfile")
    package_path = "" if rootfile is None else rootfile.get("full-path", "")
    if package_path not in archive:
        raise UnreadableDocument("It is a damaged EPUB book: its package file is missing.")
    for chapter in _spine(_small_xml(archive, package_path), posixpath.dirname(package_path)):
        if chapter in archive:
            for number, block in enumerate(html_blocks(_decoded(archive.pieces(chapter)))):
                yield replace(block, section=True) if number == 0 else block


def _spine(package: ET.Element, base: str) -> Iterator[str]:
    """The member names of the book's chapters, in reading order."""
    manifest = {
        item.get("id", ""): item
        for item in package.iterfind(f"{_OPF}manifest/{_OPF}item")
        if item.get("media-type") in _HTML_TYPES
    }
    for reference in package.iterfind(f"{_OPF}spine/{_OPF}itemref"):
        item = manifest.get(reference.get("idref", ""))
        if item is not None:
            href = unquote(item.get("href", "").split("#")[0])
            yield posixpath.normpath(posixpath.join(base, href))


def _decoded(pieces: Iterable[bytes]) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
    for piece in pieces:
        yield decoder.decode(piece)
    yield decoder.decode(b"", final=True)
