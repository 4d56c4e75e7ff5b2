"""Compare two versions of a reply: a word-level diff, side by side.

`word_diff` splits both texts into words and the whitespace between them (so the layout is
kept) and lines them up with difflib; the dialog shows the older version on the left with what
it lost struck through in red, the newer on the right with what it gained in green. The texts
are model output: every piece is HTML-escaped before it is styled.
"""

from __future__ import annotations

import difflib
import html
import re

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ui.widgets.theme import colors_for, em, is_dark

Piece = tuple[str, bool]  # (text, changed)
_TOKENS = re.compile(r"\s+|[^\s]+")


def word_diff(old: str, new: str) -> tuple[list[Piece], list[Piece]]:
    """Both texts as pieces, each marked changed or not: words that differ, compared by word
    (whitespace kept as it was, never marked on its own)."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    left: list[Piece] = []
    right: list[Piece] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        changed = tag != "equal"
        left += [(t, changed and not t.isspace()) for t in a[i1:i2]]
        right += [(t, changed and not t.isspace()) for t in b[j1:j2]]
    return _merge(left), _merge(right)


def _merge(pieces: list[Piece]) -> list[Piece]:
    merged: list[Piece] = []
    for text, changed in pieces:
        if merged and merged[-1][1] == changed:
            merged[-1] = (merged[-1][0] + text, changed)
        else:
            merged.append((text, changed))
    return merged


def pieces_html(pieces: list[Piece], colour: str, strike: bool) -> str:
    style = f"background-color:{colour};" + ("text-decoration:line-through;" if strike else "")
    out = []
    for text, changed in pieces:
        escaped = html.escape(text).replace("\n", "<br>")
        out.append(f'<span style="{style}">{escaped}</span>' if changed else escaped)
    return '<div style="white-space:pre-wrap;">' + "".join(out) + "</div>"


class SiblingDiffDialog(QDialog):
    """Two versions side by side; `old_label`/`new_label` say which (e.g. "Version 1 of 3")."""

    def __init__(
        self,
        old: str,
        new: str,
        old_label: str,
        new_label: str,
        parent: QWidget | None = None,
        title: str = "Compare Versions",
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setAccessibleName("Compare two versions of a reply")
        dark = is_dark(self.palette())
        removed, added = ("#5c1d1d", "#1d4a2a") if dark else ("#ffd7d5", "#ccf2d4")
        left, right = word_diff(old, new)
        changed = sum(1 for _, c in right if c) + sum(1 for _, c in left if c)
        columns = QHBoxLayout()
        self.panes: list[QTextBrowser] = []
        for label, pieces, colour, strike in (
            (old_label, left, removed, True),
            (new_label, right, added, False),
        ):
            column = QVBoxLayout()
            heading = QLabel(label)
            heading.setStyleSheet(f"color:{colors_for(dark).muted};")
            pane = QTextBrowser()
            pane.setOpenLinks(False)
            pane.setAccessibleName(label)
            pane.setHtml(pieces_html(pieces, colour, strike))
            column.addWidget(heading)
            column.addWidget(pane)
            columns.addLayout(column)
            self.panes.append(pane)
        summary = QLabel(
            "The versions are the same."
            if not changed
            else "Removed words are struck through on the left;"
            " added words are marked on the right."
        )
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        layout.addLayout(columns)
        layout.addWidget(buttons)
        self.resize(em(self, 60), em(self, 30))
