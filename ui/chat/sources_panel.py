"""A reply's sources under it: the knowledge excerpts its turn read, folded to one line
("Sources · 3") that unfolds to one row per source: its number as the model cites it, the file,
page and collection, "changed since" when the file changed after the turn, the excerpt's start,
*Show* (the excerpt in its page, in the app: `showRequested`, answered by the window with a
`source_dialog.SourceDialog`), *Open* (the file, with the system's handler) and *Reveal* (its
folder). A citation `[N]` clicked in the reply unfolds the list and marks that source.

Excerpts come from the person's documents and citations from the model: shown as plain text,
and a file is opened only from these buttons, through QDesktopServices, never from a link inside
rendered text.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from ui.chat.source_dialog import show_tip
from ui.text.plain_text import literal, menu_text, plain_label
from ui.widgets.file_places import open_file, reveal_file
from ui.widgets.fold_toggle import fold_toggle, show_fold
from ui.widgets.theme import em, scale_font
from ui.widgets.view_models import SourceView

_EXCERPT_CHARS = 320  # of an excerpt shown in its row (the model read all of it)
_MARK_MS = 1600
_STATES = {
    "changed": "changed since",
    "gone": "no longer in the knowledge",
}
_STATE_TIPS = {
    "changed": "The file has changed since this reply read it; the reply answered the text "
    "shown here. A new message reads the file as it is now.",
    "gone": "The knowledge no longer holds this file (deleted, moved, or its folder removed).",
}


def source_title(source: SourceView) -> str:
    """E.g. "[2] guide.pdf · page 3 · Manuals"."""
    parts = [f"[{source.number}] {Path(source.path).name}"]
    if source.page is not None:
        parts.append(f"page {source.page}")
    if source.heading:
        parts.append(source.heading)
    parts.append(source.collection)
    return " · ".join(parts)


def excerpt_start(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXCERPT_CHARS else flat[: _EXCERPT_CHARS - 1].rstrip() + "…"


class SourceRow(QFrame):
    showRequested = Signal(SourceView)  # Show was clicked

    def __init__(self, source: SourceView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source = source
        self.setObjectName("SourceRow")
        self.setProperty("marked", False)
        self.setAccessibleName(source_title(source))
        title = plain_label(source_title(source), self)
        title.setObjectName("SourceTitle")
        title.setWordWrap(True)
        self.state = plain_label(_STATES.get(source.state, ""), self)
        self.state.setObjectName("SourceState")
        self.state.setToolTip(_STATE_TIPS.get(source.state, ""))
        self.state.setVisible(source.state in _STATES)
        found = Path(source.path).exists()
        # Shown from the index, so also for a file gone since (the excerpt kept, and why).
        self.show_button = self._button("Show", show_tip(source), True)
        self.show_button.clicked.connect(lambda: self.showRequested.emit(source))
        self.open_button = self._button("Open", "Open the file", found)
        self.reveal_button = self._button("Reveal", "Show the file in its folder", found)
        self.open_button.clicked.connect(lambda: open_file(source.path))
        self.reveal_button.clicked.connect(lambda: reveal_file(source.path))
        self.excerpt = plain_label(excerpt_start(source.text), self)
        self.excerpt.setObjectName("SourceExcerpt")
        self.excerpt.setWordWrap(True)
        self.excerpt.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.excerpt.setToolTip(literal(source.path))
        scale_font(self.excerpt, 0.92)
        head = QHBoxLayout()
        head.setSpacing(em(self, 0.5))
        head.addWidget(title, 1)
        head.addWidget(self.state)
        head.addWidget(self.show_button)
        head.addWidget(self.open_button)
        head.addWidget(self.reveal_button)
        layout = QVBoxLayout(self)
        margin = em(self, 0.5)
        layout.setContentsMargins(margin, round(margin * 0.6), margin, round(margin * 0.6))
        layout.setSpacing(em(self, 0.25))
        layout.addLayout(head)
        layout.addWidget(self.excerpt)

    def _button(self, text: str, tip: str, found: bool) -> QPushButton:
        button = QPushButton(menu_text(text), self)
        button.setObjectName("SourceButton")
        button.setAccessibleName(f"{text} {Path(self.source.path).name}")
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        button.setAutoDefault(False)
        button.setEnabled(found)
        button.setToolTip(tip if found else "The file is no longer there.")
        return button

    def set_marked(self, marked: bool) -> None:
        self.setProperty("marked", marked)
        self.style().unpolish(self)
        self.style().polish(self)


class SourcesPanel(QFrame):
    showRequested = Signal(SourceView)  # a row's Show was clicked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("SourcesPanel")
        self.setAccessibleName("Sources")
        self._sources: tuple[SourceView, ...] = ()
        self.rows: list[SourceRow] = []
        self.toggle = fold_toggle(self, "SourcesToggle", 0.92)
        self.toggle.clicked.connect(self._show_open)
        self._list = QVBoxLayout()
        self._list.setSpacing(em(self, 0.3))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(em(self, 0.3))
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addLayout(self._list)
        self._show_open(False)

    @property
    def expanded(self) -> bool:
        return self.toggle.isChecked()

    def set_sources(self, sources: Sequence[SourceView]) -> None:
        if tuple(sources) == self._sources:
            return
        self._sources = tuple(sources)
        for row in self.rows:
            row.hide()
            row.deleteLater()
        self.rows = [SourceRow(source, self) for source in self._sources]
        for row in self.rows:
            row.showRequested.connect(self.showRequested)
            self._list.addWidget(row)
        changed = sum(1 for s in self._sources if s.state in _STATES)
        count = len(self._sources)
        note = f" · {changed} changed since" if changed else ""
        self.toggle.setText(f"Sources · {count}{note}")
        self._show_open(self.expanded)

    def show_source(self, number: int) -> None:
        """Unfold and mark source `number` (a citation clicked in the reply) for a moment."""
        row = next((r for r in self.rows if r.source.number == number), None)
        if row is None:
            return
        self._show_open(True)
        row.set_marked(True)
        QTimer.singleShot(_MARK_MS, row, lambda: row.set_marked(False))

    def _show_open(self, expanded: bool) -> None:
        show_fold(self.toggle, expanded, "the sources")
        for row in self.rows:
            row.setVisible(expanded)


def sync_sources(
    panel: SourcesPanel | None, sources: Sequence[SourceView], host: QWidget
) -> SourcesPanel | None:
    """The panel a message shows for `sources`: made the first time a reply has some, kept
    (and updated) after; None while it never had any."""
    if panel is None and not sources:
        return None
    if panel is None:
        panel = SourcesPanel(host)
    panel.set_sources(sources)
    panel.setVisible(bool(sources))
    return panel
