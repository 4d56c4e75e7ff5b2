"""The scrolling list of messages on the active path.

Only the messages that fill the view get widgets; more are built a viewport ahead as the person
scrolls (as Open WebUI does), so a 500-message conversation opens as fast as a short one, and a
jump to an old search hit builds around the hit only. Widgets whose message is unchanged are
kept across updates, so switching a branch or finishing a reply re-renders only what changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from ui.chat.message_widget import MessageWidget
from ui.chat.summary_message import SummaryWidget
from ui.widgets.icons import themed_icon
from ui.widgets.theme import em, scale_font
from ui.widgets.view_models import MessageView

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
    editSubmitted = Signal(str, str, list)  # message id, new text, its images (ImageViews)
    editImagesRequested = Signal(str, list)  # as MessageWidget's: images an editor adds
    editImagePasted = Signal(str, bytes)
    regenerateRequested = Signal(str)
    messageWidgetCreated = Signal(object)  # a new MessageWidget, for features that extend it
    continueRequested = Signal(str)
    siblingRequested = Signal(str, int)
    deleteRequested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ChatView")
        self.setAccessibleName("Conversation")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._views: list[MessageView] = []
        self._widgets: dict[str, MessageWidget] = {}
        self._sight = ("", "")  # as MessageWidget.set_model_sight takes it
        # Widgets exist for self._views[self._first:self._end] only.
        self._first = 0
        self._end = 0
        self._stick_to_bottom = True
        # (widget, pixels from the viewport top) to hold still while heights above it settle.
        self._anchor: tuple[MessageWidget, int] | None = None
        self._adjusting = False

        container = self._container = QWidget()
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

        self._build_timer = QTimer(self)
        self._build_timer.setSingleShot(True)
        self._build_timer.setInterval(0)
        self._build_timer.timeout.connect(self._build_ahead)
        bar = self.verticalScrollBar()
        bar.rangeChanged.connect(self._on_range_changed)
        bar.valueChanged.connect(self._on_scrolled)

    # -- public API -------------------------------------------------------------------------

    def add_footer(self, widget: QWidget) -> None:
        """A widget kept below the last message (the card asking before a tool call)."""
        self._list.insertWidget(self._list.count() - 1, widget)

    def set_messages(self, views: Sequence[MessageView]) -> None:
        """Show `views` (root first); keeps the widgets of messages that are still there."""
        views = list(views)
        known = {view.id for view in self._views}
        opens_another = not any(view.id in known for view in views)
        self._first, self._end = self._window_for(views, opens_another)
        self._views = views
        self._empty.setVisible(not views)
        self._show_window()
        if opens_another:
            self.scroll_to_bottom()

    def update_streaming(
        self, message_id: str, text: str, reasoning: str = "", thinking: bool = False
    ) -> None:
        """New text (and reasoning) for the reply being generated; re-renders only that
        message."""
        for i, view in enumerate(self._views):
            if view.id == message_id:
                self._views[i] = replace(view, content=text, reasoning=reasoning, thinking=thinking)
                break
        widget = self._widgets.get(message_id)
        if widget is not None:
            widget.set_content(text, reasoning, thinking)

    def set_model_sight(self, blind: str, refusal: str) -> None:
        """Whether the loaded model sees images, for every message's editor, open or not."""
        self._sight = (blind, refusal)
        for widget in self._widgets.values():
            widget.set_model_sight(blind, refusal)

    def message_widget(self, message_id: str) -> MessageWidget | None:
        return self._widgets.get(message_id)

    def scroll_to_bottom(self) -> None:
        """Show the newest message and follow new text from now on."""
        if self._end < len(self._views):
            self._end = len(self._views)
            self._first = self._start_to_fill(self._end)
            self._show_window()
        self._stick_to_bottom = True
        self._set_anchor(None)
        self._set_value(self.verticalScrollBar().maximum())

    def scroll_to_message(self, message_id: str) -> None:
        """Bring a message into view (building around it if needed) and flash it briefly."""
        index = next((i for i, v in enumerate(self._views) if v.id == message_id), None)
        if index is None:
            return
        if not self._first <= index < self._end:
            # Far from what is built: build a fresh stretch that starts at the message,
            # rather than every message in between.
            self._first = index
            self._end = self._end_to_fill(index)
            self._show_window()
        widget = self._widgets[message_id]
        self._stick_to_bottom = False
        self._list.activate()
        self._set_anchor((widget, em(self, 2)))
        self._set_highlight(widget, True)
        QTimer.singleShot(_HIGHLIGHT_MS, widget, lambda: self._set_highlight(widget, False))

    @property
    def built_count(self) -> int:
        """How many messages have widgets now (the rest are built when scrolled to)."""
        return len(self._widgets)

    # -- building ---------------------------------------------------------------------------

    def _window_for(self, views: list[MessageView], opens_another: bool) -> tuple[int, int]:
        """Which messages to build: keep what was built, so an update never makes the view
        jump; a chat that was followed to its end keeps following it."""
        if opens_another or not self._widgets:
            end = len(views)
            return self._start_to_fill(end, views), end
        index = {view.id: i for i, view in enumerate(views)}
        old = self._views
        first = index.get(old[self._first].id) if self._first < len(old) else None
        last = index.get(old[self._end - 1].id) if 0 < self._end <= len(old) else None
        end = len(views) if self._end >= len(old) or last is None else last + 1
        start = self._start_to_fill(end, views)
        return (start if first is None else min(first, start)), end

    def _start_to_fill(self, end: int, views: list[MessageView] | None = None) -> int:
        """Where to start so views[start:end] fill the viewport about 1.5 times."""
        views = self._views if views is None else views
        start, height = end, 0
        while start > 0 and height < self._fill_height() and end - start < BATCH:
            start -= 1
            height += self._estimated_height(views[start])
        return start

    def _end_to_fill(self, start: int) -> int:
        end, height = start, 0
        while end < len(self._views) and height < self._fill_height() and end - start < BATCH:
            height += self._estimated_height(self._views[end])
            end += 1
        return end

    def _fill_height(self) -> float:
        return _FILL_VIEWPORTS * max(self.viewport().height(), em(self, 30))

    def _estimated_height(self, view: MessageView) -> int:
        # Building costs milliseconds per message, so only what shows is built; the height
        # guessed from the text length is cheap and close enough for that.
        metrics = self.fontMetrics()
        width = min(self.viewport().width(), self._column.maximumWidth())
        per_row = max(20, width // max(1, metrics.averageCharWidth()))
        lines = view.content.splitlines() or [""]
        rows = sum(1 + len(line) // per_row for line in lines) + _MESSAGE_OVERHEAD_LINES
        return rows * metrics.lineSpacing()

    def _show_window(self) -> None:
        """Build views[first:end] in order, reusing widgets, and drop every other widget."""
        shown = self._views[self._first : self._end]
        wanted = {view.id for view in shown}
        for message_id in [m for m in self._widgets if m not in wanted]:
            self._drop(message_id)
        base = 1  # after the empty-state placeholder
        for offset, view in enumerate(shown):
            widget = self._widgets.get(view.id)
            if widget is None:
                widget = self._create(view)
            elif widget.view != view:
                widget.set_view(view)
            if self._list.indexOf(widget) != base + offset:
                self._list.insertWidget(base + offset, widget)
        # If what was built turns out not to fill the view, build more once it is laid out
        # (a view that does not scroll would never ask).
        self._build_timer.start()

    def _create(self, view: MessageView) -> MessageWidget:
        kind = SummaryWidget if view.role == "summary" else MessageWidget
        widget = kind(view, self._column)
        widget.set_model_sight(*self._sight)
        widget.editSubmitted.connect(self.editSubmitted)
        widget.editImagesRequested.connect(self.editImagesRequested)
        widget.editImagePasted.connect(self.editImagePasted)
        widget.regenerateRequested.connect(self.regenerateRequested)
        widget.continueRequested.connect(self.continueRequested)
        widget.siblingRequested.connect(self.siblingRequested)
        widget.deleteRequested.connect(self.deleteRequested)
        self._widgets[view.id] = widget
        self.messageWidgetCreated.emit(widget)
        return widget

    def _drop(self, message_id: str) -> None:
        widget = self._widgets.pop(message_id)
        if self._anchor is not None and self._anchor[0] is widget:
            self._set_anchor(None)
        self._list.removeWidget(widget)
        widget.hide()
        widget.deleteLater()

    def _build_older(self) -> None:
        # Keep the message the person is looking at in place while older ones appear above
        # (when following the newest message, sticking to the bottom already does that). An
        # anchor already set stays: it was measured before anything new was laid out.
        if not self._stick_to_bottom and self._anchor is None:
            oldest = self._widgets[self._views[self._first].id]
            self._set_anchor((oldest, self._top_of(oldest) - self.verticalScrollBar().value()))
        self._first = self._start_to_fill(self._first)
        self._show_window()

    def _build_newer(self) -> None:
        self._end = self._end_to_fill(self._end)
        self._show_window()

    # -- scrolling --------------------------------------------------------------------------

    def _top_of(self, widget: QWidget) -> int:
        return widget.mapTo(self._container, QPoint(0, 0)).y()

    def _set_anchor(self, anchor: tuple[MessageWidget, int] | None) -> None:
        # The anchored widget is moved by nested layouts after the scroll range has changed,
        # so its Move events (not rangeChanged alone) are what keep it still.
        if self._anchor is not None:
            self._anchor[0].removeEventFilter(self)
        self._anchor = anchor
        if anchor is not None:
            anchor[0].installEventFilter(self)
            self._apply_anchor()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.Move
            and self._anchor is not None
            and watched is self._anchor[0]
        ):
            self._apply_anchor()
        return super().eventFilter(watched, event)

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
        # Once the layout has settled (heights only become known then).
        self._build_timer.start()

    @Slot(int)
    def _on_scrolled(self, value: int) -> None:
        if self._adjusting:
            return
        bar = self.verticalScrollBar()
        self._set_anchor(None)
        near_end = value >= bar.maximum() - em(self, 1)
        self._stick_to_bottom = near_end and self._end == len(self._views)
        self._build_ahead()

    @Slot()
    def _build_ahead(self) -> None:
        """Build a viewport ahead of the person in the direction they can still scroll, so
        scrolling never hits a wall (and a too-low height estimate corrects itself)."""
        bar = self.verticalScrollBar()
        margin = self.viewport().height()
        if bar.value() < margin and self._first > 0:
            self._build_older()
        elif bar.value() > bar.maximum() - margin and self._end < len(self._views):
            self._build_newer()

    @staticmethod
    def _set_highlight(widget: MessageWidget, on: bool) -> None:
        widget.setProperty("highlighted", on)
        widget.style().unpolish(widget)
        widget.style().polish(widget)
