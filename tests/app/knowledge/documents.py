"""Tiny documents built in code for the knowledge tests (PDFs by hand: `tests.pdf_files`; DOCX
and EPUB as the zip files they are), and a deterministic test embedder: words hashed into a
vector."""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np
from numpy.typing import NDArray

from tests.pdf_files import pdf_bytes


def encrypted_pdf_bytes(pages: Sequence[str], user_password: str) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(pages))))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def docx_bytes(paragraphs: Sequence[tuple[str | None, str]]) -> bytes:
    """A Word document of (style id, text) paragraphs. The style "Berschrift1" is named
    "heading 1" in its styles part, as German Word writes a first-level heading."""
    body = "".join(
        "<w:p>"
        + (f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else "")
        + f'<w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r></w:p>'
        for style, text in paragraphs
    )
    document = (
        f'<?xml version="1.0"?><w:document xmlns:w="{_W}"><w:body>{body}</w:body></w:document>'
    )
    styles = (
        f'<?xml version="1.0"?><w:styles xmlns:w="{_W}"><w:style w:type="paragraph" '
        'w:styleId="Berschrift1"><w:name w:val="heading 1"/></w:style></w:styles>'
    )
    return _zip({"word/document.xml": document, "word/styles.xml": styles})


def epub_bytes(chapters: Sequence[tuple[str, str]]) -> bytes:
    """An EPUB of (file name, XHTML body) chapters; the manifest lists them backwards and the
    spine in order, so reading order comes from the spine."""
    items = "".join(
        f'<item id="c{i}" href="text/{name}" media-type="application/xhtml+xml"/>'
        for i, (name, _) in reversed(list(enumerate(chapters)))
    )
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    package = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        f"<manifest>{items}</manifest><spine>{spine}</spine></package>"
    )
    container = (
        '<?xml version="1.0"?><container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    members = {"mimetype": "application/epub+zip", "META-INF/container.xml": container}
    members["OEBPS/content.opf"] = package
    for name, body in chapters:
        members[f"OEBPS/text/{name}"] = (
            '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
            f"<head><title>t</title></head><body>{body}</body></html>"
        )
    return _zip(members)


def _zip(members: Mapping[str, str | bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def zip_bomb_bytes(member: str, inflated_bytes: int) -> bytes:
    """A zip whose `member` inflates from a few kilobytes to `inflated_bytes`."""
    return _zip({member: b" " * inflated_bytes})


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


class HashEmbedder:
    """Words hashed into a signed bag-of-words vector: texts sharing words are near. Records
    every text it embedded."""

    def __init__(self, dimensions: int = 64, model_id: str = "test-hash-64") -> None:
        self.model_id = model_id
        self.dimensions = dimensions
        self.embedded: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.embedded += texts
        return np.stack([self._vector(text) for text in texts]).astype(np.float32)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return self._vector(text)

    def _vector(self, text: str) -> NDArray[np.float32]:
        vector = np.zeros(self.dimensions, np.float32)
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            vector[digest[0] % self.dimensions] += 1.0 if digest[1] & 1 else -1.0
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            vector[0] = norm = 1.0
        return vector / norm
