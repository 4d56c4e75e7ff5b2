"""A compacted branch's summary in the chat: a message of its own kind, folded under a line that
says what it stands for (how many earlier messages, from which to which, the tokens they took,
the summary's own length, the messages kept word for word below it), open while it is written.

The summary is model output: it renders as a reply does (safe Markdown), and it can be edited
(a new version beside it, as any edit) and replayed from its Details, like a reply.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from ui.chat.message_widget import MessageWidget
from ui.widgets.theme import em, scale_font
from ui.widgets.view_models import MessageView, SummaryView
from ui.widgets.visibility import set_shown


def summary_line(summary: SummaryView | None, stats: dict[str, float] | None = None) -> str:
    """ "Summary of 12 earlier messages · 3,410 tokens in 182 · 2 turns kept word for word"."""
    if summary is None:
        return "Summary of the earlier conversation"
    count = "1 earlier message" if summary.covered == 1 else f"{summary.covered} earlier messages"
    parts = [f"Summary of {count}"]
    written = int((stats or {}).get("generated_tokens", 0))
    if summary.stands_for is not None:
        parts.append(f"{summary.stands_for:,} tokens" + (f" in {written:,}" if written else ""))
    if summary.kept:
        parts.append(f"{summary.kept} later message{'s' if summary.kept != 1 else ''} kept as is")
    if summary.edited:
        parts.append("edited")
    return " · ".join(parts)


def summary_span(summary: SummaryView | None) -> str:
    """Its tooltip: the span it covers, by the first words of its first and last message."""
    if summary is None or not summary.first:
        return "What was said before this point, summarised"
    return (
        f"Covers the full chat from “{summary.first}” to “{summary.last}”; that chat is kept: "
        "‹ › on this summary steps back to it"
    )


class SummaryHeader(QFrame):
    """The fold line: a toggle and what the summary stands for."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("SummaryHeader")
        self.toggle = QToolButton(self)
        self.toggle.setObjectName("SummaryToggle")
        self.toggle.setAutoRaise(True)
        self.toggle.setCheckable(True)
        self.toggle.setCursor(Qt.CursorShape.PointingHandCursor)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.label = QLabel(self)
        self.label.setObjectName("SummaryLine")
        self.label.setTextFormat(Qt.TextFormat.PlainText)  # first words of the person's text
        self.label.setWordWrap(True)
        scale_font(self.label, 0.9)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(em(self, 0.5), em(self, 0.3), em(self, 0.7), em(self, 0.3))
        layout.setSpacing(em(self, 0.3))
        layout.addWidget(self.toggle)
        layout.addWidget(self.label, 1)

    def show_summary(self, view: MessageView, open_: bool) -> None:
        line = summary_line(view.summary, dict(view.stats))
        self.label.setText(line)
        self.label.setToolTip(summary_span(view.summary))
        self.toggle.setChecked(open_)
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if open_ else Qt.ArrowType.RightArrow)
        self.toggle.setText("Hide" if open_ else "Show")
        what = "Hide the summary" if open_ else "Show the summary"
        self.toggle.setAccessibleName(what)
        self.toggle.setToolTip(what)
        self.setAccessibleName(line)


class SummaryWidget(MessageWidget):
    """A summary message: folded once written (its line says what it stands for), open while
    it streams or when the person opens it."""

    _header: SummaryHeader | None = None
    _open: bool | None = None  # None: as its state suggests (open while written)

    @property
    def header(self) -> SummaryHeader:
        if self._header is None:
            self._header = SummaryHeader(self)
            self._header.toggle.clicked.connect(self._toggle)
            self._layout.insertWidget(0, self._header)
        return self._header

    @property
    def is_open(self) -> bool:
        streaming = self.view.status == "streaming"
        return streaming or self.is_editing or bool(self._open)

    def _apply(self, view: MessageView, render: bool) -> None:
        super()._apply(view, render)
        self.header.show_summary(view, self.is_open)
        set_shown(self._bubble, self.is_open and not self.is_editing)

    def _render_body(self, streaming: bool) -> None:
        self._markdown.render(self.view.content, self._dark, streaming)
        set_shown(self.body, bool(self.view.content))

    def _toggle(self) -> None:
        self._open = not self.is_open
        self._apply(self.view, render=False)
