"""A search result's second line: the text around the best match, its matching words in bold in
the accent colour, wrapped to the row and cut after a few lines. The text comes from messages,
so it is escaped: only the highlighting is markup."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import QRect, QRectF
from PySide6.QtGui import QAbstractTextDocumentLayout, QFont, QPainter, QTextDocument


def snippet_html(spans: Sequence[tuple[str, bool]], text: str, accent: str) -> str:
    """`spans` as HTML: each piece escaped, the matches bold in `accent`."""
    parts = [
        f"<b style='color:{accent}'>{html.escape(piece)}</b>" if match else html.escape(piece)
        for piece, match in spans
    ]
    return f"<span style='color:{text}'>{''.join(parts)}</span>"


def paint_snippet(
    painter: QPainter,
    rect: QRect,
    spans: Sequence[tuple[str, bool]],
    font: QFont,
    colors: tuple[str, str],
) -> None:
    """Draw `spans` wrapped inside `rect` (clipped there); `colors` are (text, accent)."""
    document = QTextDocument()
    document.setDefaultFont(font)
    document.setDocumentMargin(0)
    document.setTextWidth(rect.width())
    document.setHtml(snippet_html(spans, *colors))
    painter.save()
    painter.translate(rect.topLeft())
    context = QAbstractTextDocumentLayout.PaintContext()
    context.clip = QRectF(0, 0, rect.width(), rect.height())
    painter.setClipRect(context.clip)
    document.documentLayout().draw(painter, context)
    painter.restore()


def matches_text(count: int) -> str:
    return "1 match" if count == 1 else f"{count:,} matches"
