"""How a reply being written shows in the window: its text, the prompt-reading progress (with
an estimate of the time left), "Stopping…" from Stop until the worker confirms, and the busy
state of the composer and the Chat menu.

Tokens arrive far faster than a person reads, and re-rendering Markdown is not free: only the
latest text is kept, and the streaming message is re-rendered at most `STREAM_FPS` times a
second. Re-rendering the whole conversation meanwhile (a switch of branch, a title change) shows
the newest streamed text, not the older one the store holds. A reply that starts writing a
tool call shows "Calling get_weather on weather…" instead of the call's markup (the tool by its
own name and its server's, whether the model is local or remote).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from app.generation.reply_events import ReplyPrefill, StreamUpdate
from app.mcp.tool_info import ToolLabel
from ui.chat.reply_progress import STOPPING, PrefillEstimate
from ui.chat.tool_names import tool_text
from ui.widgets.view_models import MessageView
from ui.window.window_host import ChatPane

if TYPE_CHECKING:
    from ui.window.actions import WindowActions
    from ui.window.status_panel import StatusPanel

STREAM_FPS = 30


def calling_note(tool: ToolLabel) -> str:
    """What a reply shows instead of the markup of the call it is writing."""
    return f"Calling {tool_text(tool.name, tool.server)}…" if tool.name else "Calling a tool…"


class StreamHost(ChatPane, Protocol):
    """The window as a streaming reply's presentation uses it."""

    status_panel: StatusPanel
    menu_actions: WindowActions


class StreamPresenter(QObject):
    idle = Signal()  # no reply is being written any more

    def __init__(self, window: StreamHost) -> None:
        super().__init__(window.window())
        self._window = window
        self._latest: StreamUpdate | None = None  # the latest streamed text, not yet shown
        # message id -> the newest streamed update, newer than what the store holds
        self._streamed: dict[int, StreamUpdate] = {}
        self._timer = QTimer(self, singleShot=True, interval=1000 // STREAM_FPS)
        self._timer.timeout.connect(self._show)
        self._estimate = PrefillEstimate()
        self._stopping = False

    def with_streamed_text(self, views: list[MessageView]) -> list[MessageView]:
        """`views` with each streaming message's newest text and reasoning."""
        shown = list(views)
        for i, view in enumerate(shown):
            newer = self._streamed.get(int(view.id))
            if newer is not None and view.status == "streaming":
                shown[i] = replace(
                    view, content=newer.text, reasoning=newer.reasoning, thinking=newer.thinking
                )
        return shown

    def stop(self) -> None:
        """Show nothing more (the window is closing)."""
        self._timer.stop()

    @Slot(object)
    def on_stream(self, update: StreamUpdate) -> None:
        self._streamed[update.message_id] = update
        self._latest = update
        if not self._timer.isActive():
            self._timer.start()

    @Slot()
    def _show(self) -> None:
        update, self._latest = self._latest, None
        window = self._window
        if update is not None and update.conversation_id == window.current_conversation_id:
            window.chat_view.update_streaming(
                str(update.message_id), update.text, update.reasoning, update.thinking
            )
            if update.calling is not None and not self._stopping:
                tool = window.controller.tools.label(update.conversation_id, update.calling)
                self._show_note(update.message_id, calling_note(tool))

    @Slot(object)
    def on_prefill(self, progress: ReplyPrefill) -> None:
        self._window.status_panel.set_prefill(progress.done, progress.total)
        note = self._estimate.note(progress.done, progress.total)
        if not self._stopping:
            self._show_note(progress.message_id, note)

    @Slot()
    def request_stop(self) -> None:
        """Stop the reply; it says "Stopping…" until the worker confirms (the app is idle)."""
        controller = self._window.controller
        if not controller.is_busy() or self._stopping:
            return
        self._stopping = True
        controller.stop()
        self._window.composer.set_stopping()
        self._window.menu_actions.stop.setEnabled(False)
        message_id = controller.streaming_message_id()
        if message_id is not None:
            self._show_note(message_id, STOPPING)

    def _show_note(self, message_id: int, note: str) -> None:
        widget = self._window.chat_view.message_widget(str(message_id))
        if widget is not None:
            widget.set_progress_note(note)

    @Slot(bool)
    def set_busy(self, busy: bool) -> None:
        self._window.composer.set_generating(busy)
        actions = self._window.menu_actions
        actions.stop.setEnabled(busy)
        actions.regenerate.setEnabled(not busy)
        actions.edit_last.setEnabled(not busy)
        if not busy:
            self._stopping = False
            self._timer.stop()
            self._latest = None
            self._streamed.clear()
            self._window.status_panel.set_prefill(0, 0)
            self.idle.emit()
