"""One message of the chat: its text, its actions (copy, edit, regenerate, ‹ n/m ›) and its stats.

It shows a `MessageView` and reports what the person wants through signals; it never changes the
conversation itself, so the window decides what an edit or a regeneration means. The row of
actions under it is a `MessageToolbar`; its status line and dimming come from `message_state`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QCursor, QGuiApplication, QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from ui.chat.attachment_chips import AttachmentChips
from ui.chat.collapsed_text import show_collapsed, show_more_button
from ui.chat.image_chips import ImageChips
from ui.chat.inline_editor import InlineEditor
from ui.chat.message_state import show_left_out, show_status, status_badge, status_text
from ui.chat.message_toolbar import MessageToolbar, can_continue
from ui.chat.sibling_nav import SiblingNav
from ui.chat.sources_panel import SourcesPanel, sync_sources
from ui.chat.thinking_section import ThinkingSection
from ui.chat.tool_result import ToolResultView, calls_label, calls_summary
from ui.chat.trace_section import TraceSection
from ui.text.safe_browser import SafeBrowser
from ui.text.streaming_markdown import StreamingMarkdown
from ui.widgets.theme import em, is_dark, scale_font
from ui.widgets.view_models import ImageView, MessageView, SourceView
from ui.widgets.visibility import set_shown

# Per role: the frame's and bubble's object names (theme.qss styles them), the spoken name.
_ROLES = {
    "user": ("UserMessage", "UserBubble", "Your message"),
    "assistant": ("AssistantMessage", "AssistantBubble", "Assistant reply"),
    "system": ("SystemMessage", "SystemBubble", "System prompt"),
    "tool": ("ToolMessage", "ToolBubble", "Tool result"),
    "summary": ("SummaryMessage", "SummaryBubble", "Summary of the earlier conversation"),
}
# A user bubble never takes more of the row than this, like the chat apps people know.
_BUBBLE_SHARE = 0.8


class MessageWidget(QFrame):
    """Shows one MessageView; `set_content` re-renders only this message while it streams. Parts
    most messages never need (the `‹ n/m ›` control, the status badge, the editor) are built
    only when a message needs them: a chat opens with many of these at once."""

    editSubmitted = Signal(str, str, list)  # message id, new text, its images (ImageViews)
    editImagesRequested = Signal(str, list)  # message id, image paths its editor adds
    editImagePasted = Signal(str, bytes)  # message id, a picture pasted into its editor
    regenerateRequested = Signal(str)
    continueRequested = Signal(str)  # a stopped or cut-off reply: write more of it
    siblingRequested = Signal(str, int)
    deleteRequested = Signal(str)
    sourceShowRequested = Signal(SourceView)  # Show was clicked on one of its sources

    def __init__(self, view: MessageView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._view = view
        self._dark = is_dark()
        self._natural_width = 0
        self._editor: InlineEditor | None = None
        self._badge: QLabel | None = None
        self._thinking: ThinkingSection | None = None
        self.trace_section: TraceSection | None = None  # an imported turn's tool calls
        self.chips: AttachmentChips | None = None
        self.image_chips: ImageChips | None = None  # a user message's images, as thumbnails
        self._calls: QLabel | None = None  # the calls a reply made, under its text
        self.sources: SourcesPanel | None = None  # what a reply's turn read of the knowledge
        self._note = ""  # set by the window while the reply is being written
        self._sight = ("", "")  # what its editor says of a model that cannot see images
        role = view.role
        frame_name, bubble_name, spoken = _ROLES[role]
        self.setObjectName(frame_name)
        self.setAccessibleName(spoken)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

        self.body = SafeBrowser(self)
        self.body.setObjectName("MessageBody")
        self.body.setAccessibleName(f"{spoken} text")
        self._bubble = QFrame(self)
        self._bubble.setObjectName(bubble_name)
        bubble_layout = self._bubble_layout = QVBoxLayout(self._bubble)
        across = em(self, 0.9) if role not in ("assistant", "tool") else 0
        down = round(across * 0.6)
        bubble_layout.setContentsMargins(across, down, across, down)
        if role == "system":
            caption = QLabel("System prompt")
            caption.setObjectName("SystemCaption")
            scale_font(caption, 0.85, bold=True)
            bubble_layout.addWidget(caption)
        bubble_layout.addWidget(self.body)
        self._markdown = StreamingMarkdown(self.body, bubble_layout)
        # A tool's result shows folded in its own view (plain text), not as the message body.
        self.tool_result: ToolResultView | None = None
        if role == "tool":
            self.tool_result = ToolResultView(self._bubble)
            bubble_layout.addWidget(self.tool_result)
            self.body.hide()

        self._toolbar = MessageToolbar(role, self)
        self.copy_button = self._toolbar.copy_button
        self.edit_button = self._toolbar.edit_button
        self.regenerate_button = self._toolbar.regenerate_button
        self.continue_button = self._toolbar.continue_button
        self.delete_button = self._toolbar.delete_button
        self.stats_label = self._toolbar.stats_label
        self.copy_button.clicked.connect(self._copy_message)
        if self.edit_button is not None:
            self.edit_button.clicked.connect(lambda: self.start_editing())
        if self.regenerate_button is not None:
            self.regenerate_button.clicked.connect(self._request_regenerate)
        if self.continue_button is not None:
            self.continue_button.clicked.connect(self._request_continue)
        if self.delete_button is not None:
            self.delete_button.clicked.connect(self._request_delete)
        bubble_row = QHBoxLayout()
        if role == "user":
            bubble_row.addStretch(1)
            bubble_row.addWidget(self._bubble)
        else:
            bubble_row.addWidget(self._bubble, 1)
        layout = self._layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(em(self, 0.3))
        if view.images:
            self.image_chips = ImageChips(removable=False, align_right=role == "user")
            self.image_chips.set_images(view.images)
            layout.addWidget(self.image_chips)
        if view.attachments:
            self.chips = AttachmentChips(removable=False, align_right=role == "user")
            self.chips.set_attachments(view.attachments)
            layout.addWidget(self.chips)
        layout.addLayout(bubble_row)
        self.more_button: QToolButton | None = None
        if role == "user":
            # A long message of the person's shows its first lines until asked for the rest.
            self._collapsed = True
            self.more_button = show_more_button(self)
            self.more_button.clicked.connect(self._toggle_collapsed)
            layout.addWidget(self.more_button, 0, Qt.AlignmentFlag.AlignRight)
        layout.addWidget(self._toolbar)
        self._apply(view, render=True)

    # -- public API -------------------------------------------------------------------------

    @property
    def view(self) -> MessageView:
        return self._view

    @property
    def nav(self) -> SiblingNav | None:
        """The `‹ n/m ›` control, once the message has had siblings."""
        return self._toolbar.nav

    @property
    def badge(self) -> QLabel | None:
        """The status line (stopped, error, interrupted, generating), once one was needed."""
        return self._badge

    @property
    def thinking_section(self) -> ThinkingSection | None:
        """The folded reasoning above a reply's answer, once the reply has reasoning."""
        return self._thinking

    @property
    def is_editing(self) -> bool:
        return self._editor is not None

    def set_view(self, view: MessageView) -> None:
        """Show `view`; re-renders the text only when it (or streaming-ness) changed."""
        old = self._view
        streaming = view.status == "streaming"
        render = view.content != old.content or streaming != (old.status == "streaming")
        render = render or len(view.sources) != len(old.sources)  # citations become links
        self._view = view
        self._apply(view, render)

    def set_progress_note(self, note: str) -> None:
        """A line on a reply being written, e.g. "Reading the prompt… 512 / 1,847 tokens" or
        "Stopping…"; "" shows the text again (or "Generating…" while there is none)."""
        self._note = note
        self._update_badge()

    def set_content(self, text: str, reasoning: str = "", thinking: bool = False) -> None:
        """New text (and reasoning) for a streaming reply; renders only this widget, without
        caching."""
        self._view = replace(self._view, content=text, reasoning=reasoning, thinking=thinking)
        self._update_thinking()
        self._render_body(streaming=True)
        self._update_badge()

    def start_editing(
        self, draft: str | None = None, images: Sequence[ImageView] | None = None
    ) -> None:
        """Open the inline editor on a user message (or a summary), with `draft` and `images` in
        it if given (e.g. an edit the window could not save), else the message's own."""
        if self._view.role not in ("user", "summary") or self._editor is not None:
            return
        shown = self._view.images if images is None else images
        self._editor = InlineEditor(self._view.content, shown, draft, self._sight)
        message_id = self._view.id
        self._editor.imagesRequested.connect(lambda p: self.editImagesRequested.emit(message_id, p))
        self._editor.imagePasted.connect(lambda data: self.editImagePasted.emit(message_id, data))
        self._editor.saved.connect(self._submit_edit)
        self._editor.cancelled.connect(self.stop_editing)
        self._layout.insertWidget(0, self._editor)
        self._bubble.hide()
        self._apply(self._view, render=False)  # the toolbar and the images go while editing
        self._editor.edit.setFocus()
        self._editor.edit.moveCursor(self._editor.edit.textCursor().MoveOperation.End)

    def set_model_sight(self, blind: str, refusal: str) -> None:  # for the editor's images
        self._sight = (blind, refusal)
        if self._editor is not None:
            self._editor.set_model_sight(blind, refusal)

    def add_edit_image(self, image: ImageView) -> None:  # gone if its editor closed meanwhile
        if self._editor is not None:
            self._editor.add_image(image)

    def stop_editing(self) -> None:
        if self._editor is None:
            return
        self._editor.hide()
        self._editor.setParent(None)  # gone from findChild at once, not at the next loop turn
        self._editor.deleteLater()
        self._editor = None
        self._bubble.show()
        self._apply(self._view, render=False)

    # -- building and updating --------------------------------------------------------------

    def _apply(self, view: MessageView, render: bool) -> None:
        self._update_thinking()
        if view.trace and self.trace_section is None:
            self.trace_section = TraceSection(self._bubble)
            layout = self._bubble_layout
            layout.insertWidget(layout.indexOf(self.body), self.trace_section)
        if self.trace_section is not None:
            self.trace_section.set_trace(view.trace)
            set_shown(self.trace_section, bool(view.trace))
        self._update_calls()
        self._update_sources()
        if render:
            self._render_body(view.status == "streaming")
        if view.sibling_count > 1 or self._toolbar.nav is not None:
            self._ensure_nav().set_position(view.sibling_index, view.sibling_count)
        self._toolbar.show_for(view, editing=self._editor is not None)
        if self.image_chips is not None:  # the editor shows them, removable, while it is open
            set_shown(self.image_chips, self._editor is None)
        show_left_out(self, self._bubble, self.body, view.left_out)
        self._update_badge()

    def _ensure_nav(self) -> SiblingNav:
        nav = self._toolbar.nav
        if nav is None:
            nav = self._toolbar.add_nav()
            nav.stepRequested.connect(self._on_step)
            for keys, delta in (("Alt+Left", -1), ("Alt+Right", +1)):
                QShortcut(
                    QKeySequence(keys),
                    self,
                    lambda d=delta: self.nav.step(d) if self.nav else None,
                    Qt.ShortcutContext.WidgetWithChildrenShortcut,
                )
        return nav

    def _update_thinking(self) -> None:
        view = self._view
        if self._thinking is None:
            if not (view.reasoning or view.thinking):
                return
            self._thinking = ThinkingSection(self._bubble)
            self._bubble_layout.insertWidget(0, self._thinking)
        thinking = view.thinking and view.status == "streaming"
        self._thinking.set_reasoning(view.reasoning, thinking, view.stats)
        set_shown(self._thinking, bool(view.reasoning or thinking))

    def _update_calls(self) -> None:
        calls = self._view.tool_calls
        if self._calls is None:
            if not calls:
                return
            self._calls = calls_label(calls, self._bubble)
            self._bubble_layout.addWidget(self._calls)
        self._calls.setText(calls_summary(calls))
        set_shown(self._calls, bool(calls))

    def _update_sources(self) -> None:
        had = self.sources
        self.sources = sync_sources(had, self._view.sources, self)
        if had is None and self.sources is not None:
            self._layout.insertWidget(self._layout.indexOf(self._toolbar), self.sources)
            self.body.sourceClicked.connect(self.sources.show_source)
            self.sources.showRequested.connect(self.sourceShowRequested)

    def _render_body(self, streaming: bool) -> None:
        text = self._view.content
        if self.tool_result is not None:
            tool = self._view.stats.get("tool") or self._view.tool_name or "tool"
            self.tool_result.set_result(str(tool), text, self._view.stats)
            return
        if self._view.role == "assistant":
            self._markdown.render(text, self._dark, streaming, len(self._view.sources))
            set_shown(self.body, bool(text))
        else:
            self.body.set_plain_text(text)
            self._natural_width = self._measure_natural_width(text)
            self._fit_bubble()

    @property
    def shown_text(self) -> str:
        """The text on screen (while streaming, the finished part sits in separate browsers)."""
        return self._markdown.shown_text

    def _update_badge(self) -> None:
        text = status_text(self._view, self._note)
        if not text and self._badge is None:
            return
        if self._badge is None:
            self._badge = status_badge(self._view.role == "user", self)
            layout = self._layout
            layout.insertWidget(layout.indexOf(self._toolbar), self._badge)
        show_status(self._badge, text, self._view.status)

    def _measure_natural_width(self, text: str) -> int:
        metrics = self.body.fontMetrics()
        lines = text.splitlines() or [""]
        return max(metrics.horizontalAdvance(line) for line in lines) + metrics.averageCharWidth()

    def _fit_bubble(self) -> None:
        if self._view.role != "user":
            return
        margins = self._bubble_layout.contentsMargins()
        wanted = self._natural_width + margins.left() + margins.right()
        available = int(self.width() * _BUBBLE_SHARE)
        self._bubble.setFixedWidth(max(em(self, 3), min(wanted, available)))
        self._update_collapsed()

    def _update_collapsed(self) -> None:
        if self.more_button is not None:
            show_collapsed(self.body, self.more_button, self._collapsed)

    def _toggle_collapsed(self) -> None:
        self._collapsed = not self._collapsed
        self._update_collapsed()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_bubble()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            dark = is_dark()
            if dark != self._dark:
                self._dark = dark
                if self._view.role == "assistant":
                    self._markdown.drop_frozen()
                    self._render_body(streaming=self._view.status == "streaming")

    # -- actions ----------------------------------------------------------------------------

    def _on_step(self, delta: int) -> None:
        self.siblingRequested.emit(self._view.id, delta)

    def _copy_message(self) -> None:
        QGuiApplication.clipboard().setText(self._view.content)
        QToolTip.showText(QCursor.pos(), "Message copied", self.copy_button)

    def _request_regenerate(self) -> None:
        if self._view.status != "streaming":
            self.regenerateRequested.emit(self._view.id)

    def _request_continue(self) -> None:
        if can_continue(self._view):
            self.continueRequested.emit(self._view.id)

    def _request_delete(self) -> None:
        self.deleteRequested.emit(self._view.id)

    def _submit_edit(self, text: str, images: list[ImageView]) -> None:
        message_id = self._view.id
        self.stop_editing()
        self.editSubmitted.emit(message_id, text, images)
