"""The scrolling list of messages on the active path.

Only the newest messages get widgets at first; older ones are built in batches when the person
scrolls to the top (as Open WebUI does), so a 500-message conversation opens as fast as a short
one. Widgets whose message is unchanged are kept across updates, so switching a branch or
finishing a reply re-renders only what changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from PySide6.QtCore import QPoint, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from ui.icons import themed_icon
from ui.message_widget import MessageWidget
from ui.theme import em, scale_font
from ui.view_models import MessageView

# Most messages built in one go: when a chat opens, and per step when scrolling up.
BATCH = 24
# Build enough messages to fill this many viewports (by an estimate from their text length).
_FILL_VIEWPORTS = 1.5
# Overhead of a message beyond its text, in lines: padding, toolbar, spacing.
_MESSAGE_OVERHEAD_LINES = 4
# Reading column width in font units; wider lines are hard to read.
_COLUMN_EM = 48
_HIGHLIGHT_MS = 1600


class _EmptyState(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("EmptyState")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.setAccessibleName("No messages yet")
        icon = QLabel()
        size = em(self, 3)
        icon.setPixmap(themed_icon("message").pixmap(size, size))
        icon.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title = QLabel("Start a conversation")
        title.setObjectName("EmptyTitle")
        scale_font(title, 1.6, bold=True)
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        hint = QLabel(
            "Ask anything; it all stays on this computer.\n"
            "Enter sends, Shift+Enter adds a line.\n"
            "Edits and regenerations keep every earlier version one click away."
        )
        hint.setObjectName("EmptyHint")
        hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        for widget in (icon, title, hint):
            layout.addWidget(widget, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(2)


class ChatView(QScrollArea):
    editSubmitted = Signal(str, str)
    regenerateRequested = Signal(str)
    siblingRequested = Signal(str, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ChatView")
        self.setAccessibleName("Conversation")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._views: list[MessageView] = []
        self._widgets: dict[str, MessageWidget] = {}
        self._first_built = 0
        self._stick_to_bottom = True
        # (widget, pixels from the viewport top) to hold still while heights above it settle.
        self._anchor: tuple[MessageWidget, int] | None = None
        self._adjusting = False

        container = QWidget()
        container.setObjectName("ChatContainer")
        container.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self._column = QWidget()
        self._column.setMaximumWidth(em(self, _COLUMN_EM))
        self._list = QVBoxLayout(self._column)
        pad = em(self, 1.2)
        self._list.setContentsMargins(pad, pad, pad, pad)
        self._list.setSpacing(em(self, 1.4))
        # Stretch 0: it fills the room under short chats but yields to the empty state.
        self._list.addStretch(0)
        self._empty = _EmptyState()
        self._list.insertWidget(0, self._empty, 1)
        row = QHBoxLayout(container)
        row.setContentsMargins(0, 0, 0, 0)
        row.addStretch(1)
        row.addWidget(self._column, 100)
        row.addStretch(1)
        self.setWidget(container)

        bar = self.verticalScrollBar()
        bar.rangeChanged.connect(self._on_range_changed)
        bar.valueChanged.connect(self._on_scrolled)

    # -- public API -------------------------------------------------------------------------

    def set_messages(self, views: Sequence[MessageView]) -> None:
        """Show `views` (root first); keeps the widgets of messages that are still there."""
        views = list(views)
        known = {view.id for view in self._views}
        opens_another = not any(view.id in known for view in views)
        first = self._first_to_build(views)
        self._views = views
        wanted = {view.id for view in views[first:]}
        for message_id in [m for m in self._widgets if m not in wanted]:
            self._drop(message_id)
        self._first_built = first
        self._empty.setVisible(not views)
        self._place(views[first:])
        if self._anchor is not None and self._anchor[0].view.id not in wanted:
            self._anchor = None
        if opens_another:
            self.scroll_to_bottom()

    def update_streaming(self, message_id: str, text: str) -> None:
        """New text for the reply being generated; re-renders only that message."""
        for i, view in enumerate(self._views):
            if view.id == message_id:
                self._views[i] = replace(view, content=text)
                break
        widget = self._widgets.get(message_id)
        if widget is not None:
            widget.set_content(text)

    def message_widget(self, message_id: str) -> MessageWidget | None:
        return self._widgets.get(message_id)

    def scroll_to_bottom(self) -> None:
        self._stick_to_bottom = True
        self._anchor = None
        self._set_value(self.verticalScrollBar().maximum())

    def scroll_to_message(self, message_id: str) -> None:
        """Bring a message into view (building older ones if needed) and flash it briefly."""
        index = next((i for i, v in enumerate(self._views) if v.id == message_id), None)
        if index is None:
            return
        if index < self._first_built:
            self._first_built = index
            self._place(self._views[index:])
        widget = self._widgets[message_id]
        self._stick_to_bottom = False
        self._column.layout().activate()
        self._anchor = (widget, em(self, 2))
        self._apply_anchor()
        self._set_highlight(widget, True)
        QTimer.singleShot(_HIGHLIGHT_MS, widget, lambda: self._set_highlight(widget, False))

    @property
    def built_count(self) -> int:
        """How many messages have widgets now (the rest are built on scrolling up)."""
        return len(self._widgets)

    # -- building ---------------------------------------------------------------------------

    def _first_to_build(self, views: list[MessageView]) -> int:
        # Keep as much history built as before, so an update never makes the view jump.
        newest_first = self._start_to_fill(views, len(views))
        if self._first_built < len(self._views):
            kept = self._views[self._first_built].id
            for i, view in enumerate(views):
                if view.id == kept:
                    return min(i, newest_first)
        return newest_first

    def _start_to_fill(self, views: list[MessageView], end: int) -> int:
        """Where to start building so views[start:end] fill the viewport about 1.5 times.

        Building costs milliseconds per message, so a long chat only builds what shows; the
        height is estimated from the text, which is cheap and close enough.
        """
        metrics = self.fontMetrics()
        width = min(self.viewport().width(), self._column.maximumWidth())
        per_row = max(20, width // max(1, metrics.averageCharWidth()))
        wanted = _FILL_VIEWPORTS * max(self.viewport().height(), em(self, 30))
        height = 0
        start = end
        while start > 0 and height < wanted and end - start < BATCH:
            start -= 1
            lines = views[start].content.splitlines() or [""]
            rows = sum(1 + len(line) // per_row for line in lines) + _MESSAGE_OVERHEAD_LINES
            height += rows * metrics.lineSpacing()
        return start

    def _place(self, views: list[MessageView]) -> None:
        """Lay out widgets for `views` in order, reusing existing ones."""
        base = 1  # after the empty-state placeholder
        for offset, view in enumerate(views):
            widget = self._widgets.get(view.id)
            if widget is None:
                widget = self._create(view)
            elif widget.view != view:
                widget.set_view(view)
            if self._list.indexOf(widget) != base + offset:
                self._list.insertWidget(base + offset, widget)

    def _create(self, view: MessageView) -> MessageWidget:
        widget = MessageWidget(view, self._column)
        widget.editSubmitted.connect(self.editSubmitted)
        widget.regenerateRequested.connect(self.regenerateRequested)
        widget.siblingRequested.connect(self.siblingRequested)
        self._widgets[view.id] = widget
        return widget

    def _drop(self, message_id: str) -> None:
        widget = self._widgets.pop(message_id)
        self._list.removeWidget(widget)
        widget.hide()
        widget.deleteLater()

    def _build_older(self) -> None:
        if self._first_built == 0:
            return
        # Keep the message the person is looking at in place while older ones appear above.
        oldest = self._widgets[self._views[self._first_built].id]
        self._anchor = (oldest, self._top_of(oldest) - self.verticalScrollBar().value())
        self._first_built = self._start_to_fill(self._views, self._first_built)
        self._place(self._views[self._first_built :])

    # -- scrolling --------------------------------------------------------------------------

    def _top_of(self, widget: QWidget) -> int:
        return widget.mapTo(self.widget(), QPoint(0, 0)).y()

    def _apply_anchor(self) -> None:
        if self._anchor is not None:
            widget, offset = self._anchor
            self._set_value(self._top_of(widget) - offset)

    def _set_value(self, value: int) -> None:
        # Our own scrolling must not read as the person scrolling away.
        self._adjusting = True
        try:
            self.verticalScrollBar().setValue(value)
        finally:
            self._adjusting = False

    @Slot(int, int)
    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._anchor is not None:
            self._apply_anchor()
        elif self._stick_to_bottom:
            self._set_value(maximum)

    @Slot(int)
    def _on_scrolled(self, value: int) -> None:
        if self._adjusting:
            return
        bar = self.verticalScrollBar()
        self._anchor = None
        self._stick_to_bottom = value >= bar.maximum() - em(self, 1)
        # Build older messages a viewport ahead, so scrolling up never hits a wall.
        near_top = value < self.viewport().height()
        if near_top and self._first_built > 0 and bar.maximum() > 0:
            self._build_older()

    @staticmethod
    def _set_highlight(widget: MessageWidget, on: bool) -> None:
        widget.setProperty("highlighted", on)
        widget.style().unpolish(widget)
        widget.style().polish(widget)
