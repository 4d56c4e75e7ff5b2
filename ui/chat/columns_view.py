"""Several replies to one message on screen side by side, one column each: Regenerate ×N's
versions, and a Compare's answers from several models.

Each column has a heading (the version and its seed, or the model's name and where it runs),
its text as it arrives, a line saying where it stands until its first token (loading its model,
waiting for its turn, reading the prompt) and then its stats once it ends (tokens, speed, time to
first token, what was reused from the cache, or "stopped"), a Stop of its own and a "Keep this
one" button that makes it the active branch. A line above the columns can say how the run uses
memory. Headings can change (a blind compare's names show once one answer is kept). Closing the
window stops what is still running (the text so far is kept by the app, marked stopped).

An answer streams as plain text (cheap to update many times a second) and is rendered once it
ends, as the chat renders replies: the hardened browser and safe Markdown of `ui.text`, again
when the theme turns dark or light. Headings, states and errors are plain text: a server's model
names are never read as markup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QMetaObject, QObject, Qt, Signal, Slot
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ui.chat.reply_stats import format_stats
from ui.text.plain_text import plain_label
from ui.text.safe_browser import SafeBrowser
from ui.widgets.theme import em, is_dark, scale_font
from ui.widgets.visibility import set_shown

if TYPE_CHECKING:
    from app.generation.sibling_replies import SiblingEnd, SiblingReplies, SiblingText


@dataclass(frozen=True)
class ColumnHeading:
    """A column's title (what it is: "Version 2 · seed 8", a model's name) and a detail line
    under it ("" for none: where a model runs, its size)."""

    title: str
    detail: str = ""


def stats_line(status: str, stats: Mapping[str, Any] | None, error: str | None = None) -> str:
    """A finished column's summary: the reply stats line, or why it failed."""
    if status == "error":
        return f"Failed: {error}" if error else "Failed"
    line = format_stats(stats or {})
    if status == "stopped":
        return f"{line} · stopped" if line else "Stopped before it began"
    return line


class _Column(QWidget):
    def __init__(self, heading: ColumnHeading, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = plain_label()
        self.title.setObjectName("ColumnTitle")
        scale_font(self.title, 1.0, bold=True)
        self.detail = plain_label()
        self.detail.setObjectName("ColumnDetail")
        scale_font(self.detail, 0.85)
        self.text = QPlainTextEdit()  # while the answer streams
        self.text.setObjectName("ColumnText")
        self.text.setReadOnly(True)
        self.rendered = SafeBrowser()  # once it ended, in a frame that scrolls
        self.rendered.setObjectName("ColumnRendered")
        scroller = QScrollArea()
        scroller.setObjectName("ColumnText")
        scroller.setWidgetResizable(True)
        scroller.setFrameShape(QFrame.Shape.NoFrame)
        inside = QWidget()
        inside.setObjectName("ColumnInside")
        inner = QVBoxLayout(inside)
        inner.setContentsMargins(em(self, 0.5), em(self, 0.4), em(self, 0.5), em(self, 0.4))
        inner.addWidget(self.rendered)
        inner.addStretch(1)
        scroller.setWidget(inside)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.text)
        self.pages.addWidget(scroller)
        self.stats = plain_label("Generating…")
        self.stats.setObjectName("ColumnStats")
        self.stats.setWordWrap(True)
        scale_font(self.stats, 0.85)
        self.stop = QPushButton("Stop")
        self.keep = QPushButton("Keep this one")
        self.keep.setObjectName("PrimaryButton")
        buttons = QHBoxLayout()
        buttons.addWidget(self.stop)
        buttons.addStretch(1)
        buttons.addWidget(self.keep)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(em(self, 0.3))
        layout.addWidget(self.title)
        layout.addWidget(self.detail)
        layout.addWidget(self.pages, 1)
        layout.addWidget(self.stats)
        layout.addLayout(buttons)
        self.set_heading(heading)

    def show_rendered(self) -> None:
        """The whole answer, rendered as the chat renders a reply."""
        self.rendered.set_markdown(self.text.toPlainText(), is_dark())
        self.pages.setCurrentIndex(1)

    def set_heading(self, heading: ColumnHeading) -> None:
        self.title.setText(heading.title)
        self.detail.setText(heading.detail)
        set_shown(self.detail, bool(heading.detail))
        self.text.setAccessibleName(f"{heading.title} text")
        self.stats.setAccessibleName(f"{heading.title} state")
        self.stop.setAccessibleName(f"Stop {heading.title}")
        self.keep.setAccessibleName(f"Keep {heading.title} as the active branch")


class ColumnsView(QDialog):
    stopRequested = Signal(int)  # a column's index
    keepRequested = Signal(int)
    closedWhileRunning = Signal()

    def __init__(
        self,
        headings: Sequence[ColumnHeading],
        title: str,
        hint: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setAccessibleName(title)
        self.setWindowFlag(Qt.WindowType.Tool, False)
        self.notice = plain_label()
        self.notice.setObjectName("ColumnsNotice")
        self.notice.setWordWrap(True)
        self.notice.hide()
        self.hint = plain_label(hint)
        self.hint.setObjectName("FieldHint")
        self.hint.setWordWrap(True)
        self.columns = [_Column(heading, self) for heading in headings]
        row = QHBoxLayout()
        row.setSpacing(em(self, 1))
        for i, column in enumerate(self.columns):
            column.stop.clicked.connect(lambda _=False, i=i: self.stopRequested.emit(i))
            column.keep.clicked.connect(lambda _=False, i=i: self.keepRequested.emit(i))
            row.addWidget(column, 1)
        layout = QVBoxLayout(self)
        layout.setSpacing(em(self, 0.6))
        layout.addWidget(self.notice)
        layout.addLayout(row, 1)
        layout.addWidget(self.hint)
        self._running = set(range(len(headings)))
        self._links: list[QMetaObject.Connection] = []
        self._dark = is_dark()
        self.resize(em(self, 22) * len(headings), em(self, 30))

    def follow(self, replies: SiblingReplies) -> None:
        """Show the run of `replies` (Regenerate ×N's, a Compare's): each reply's text as it
        grows and its end; a column's Stop, or closing while some run, stops them."""
        self._links = [
            replies.replyUpdated.connect(self._on_updated),
            replies.replyFinished.connect(self._on_finished),
            self.stopRequested.connect(replies.stop),
            self.closedWhileRunning.connect(replies.stop),
        ]

    def unfollow(self) -> None:
        """Show nothing more of the run (another run gets another view)."""
        for link in self._links:
            QObject.disconnect(link)
        self._links = []

    @Slot(object)
    def _on_updated(self, update: SiblingText) -> None:
        self.set_text(update.index, update.text)

    @Slot(object)
    def _on_finished(self, end: SiblingEnd) -> None:
        self.set_finished(end.index, end.status, end.stats, end.error)

    def set_notice(self, text: str) -> None:
        """The line above the columns (how the run uses memory); "" hides it."""
        self.notice.setText(text)
        set_shown(self.notice, bool(text))

    def set_hint(self, text: str) -> None:
        self.hint.setText(text)

    def set_headings(self, headings: Sequence[ColumnHeading]) -> None:
        for column, heading in zip(self.columns, headings, strict=True):
            column.set_heading(heading)

    def set_state(self, index: int, text: str) -> None:
        """Where column `index` stands before its answer begins."""
        if index in self._running:
            self.columns[index].stats.setText(text)

    def set_text(self, index: int, text: str) -> None:
        """The column's whole text so far (the view keeps the scroll at the end)."""
        column = self.columns[index]
        if index in self._running and column.stats.text() != "Generating…":
            column.stats.setText("Generating…")
        edit = column.text
        edit.setPlainText(text)
        bar = edit.verticalScrollBar()
        bar.setValue(bar.maximum())

    def set_finished(
        self, index: int, status: str, stats: Mapping[str, Any] | None, error: str | None = None
    ) -> None:
        self._running.discard(index)
        column = self.columns[index]
        column.stats.setText(stats_line(status, stats, error))
        column.stop.hide()
        if column.text.toPlainText():
            column.show_rendered()

    def mark_kept(self, index: int) -> None:
        """Column `index` was kept: the choice is made, so no other can be kept from here."""
        for i, column in enumerate(self.columns):
            column.keep.setEnabled(False)
            column.keep.setText("Kept" if i == index else "Keep this one")

    def is_running(self) -> bool:
        return bool(self._running)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and is_dark() != self._dark:
            self._dark = is_dark()
            for column in self.columns:
                if column.pages.currentIndex() == 1:
                    column.show_rendered()  # code colours and links follow the theme

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._running:
            self.closedWhileRunning.emit()
        super().closeEvent(event)
