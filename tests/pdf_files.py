"""PDFs with a text layer, written by hand (offsets and all), for tests that read PDF text."""

from __future__ import annotations

from collections.abc import Sequence


def pdf_bytes(pages: Sequence[str]) -> bytes:
    """A PDF with one page per text (Helvetica, a line per line); "" makes a page without text,
    as a scan's pages are."""
    objects: dict[int, bytes] = {}
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects[1] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objects[2] = f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode()
    objects[3] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    for i, text in enumerate(pages):
        shown = " ".join(
            "(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") Tj T*"
            for line in text.split("\n")
        )
        stream = f"BT /F1 12 Tf 14 TL 72 720 Td {shown} ET".encode() if text else b""
        objects[4 + 2 * i] = (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 "
            f"3 0 R >> >> /Contents {5 + 2 * i} 0 R >>"
        ).encode()
        objects[5 + 2 * i] = b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number in sorted(objects):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, objects[number])
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)
