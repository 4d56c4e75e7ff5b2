"""How a message shows its state beside its text: the status line (stopped, interrupted, an
error, or "Generating…" and progress notes while a reply is written) and the dimming of a
message the model no longer sees (left out of the prompt when the context overflowed).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsOpacityEffect, QLabel, QWidget

from ui.text.plain_text import plain_label
from ui.widgets.theme import scale_font
from ui.widgets.view_models import MessageView
from ui.widgets.visibility import set_shown

_BADGES = {
    "stopped": "Stopped",
    "interrupted": "Interrupted: the app closed before this reply finished",
}

LEFT_OUT_TIP = (
    "Left out of the model's view: the conversation no longer fits the model's context, so "
    "the chat's overflow setting left this message out of the latest reply's prompt"
)
_LEFT_OUT_OPACITY = 0.45


def status_text(view: MessageView, note: str) -> str:
    """The status line for `view` ("" for none); `note` is the window's line on a reply being
    written, e.g. "Reading the prompt… 512 / 1,847 tokens", or on a message of the person's
    before its reply starts ("Searching the knowledge…")."""
    if note and view.role == "user":
        return note
    if view.status == "error":
        return f"Error: {view.error or 'the reply could not be generated'}"
    if view.status == "streaming" and (note or (not view.content and not view.reasoning)):
        return note or "Generating…"
    return _BADGES.get(view.status, "")


def status_badge(align_right: bool, parent: QWidget) -> QLabel:
    """The label that shows a message's status line."""
    badge = plain_label(parent=parent)  # may quote an error
    badge.setObjectName("StatusBadge")
    badge.setWordWrap(True)
    scale_font(badge, 0.9)
    if align_right:
        badge.setAlignment(Qt.AlignmentFlag.AlignRight)
    return badge


def show_status(badge: QLabel, text: str, kind: str) -> None:
    """Show `text` in `badge`, styled by the style sheet for `kind` (the message's status)."""
    badge.setText(text)
    badge.setAccessibleName(text or "Status")
    if badge.property("kind") != kind:
        badge.setProperty("kind", kind)
        badge.style().unpolish(badge)
        badge.style().polish(badge)
    set_shown(badge, bool(text))


def show_left_out(message: QWidget, bubble: QWidget, body: QWidget, left_out: bool) -> None:
    """Dim a message's bubble when the model did not see it, and say why where the pointer
    rests (and to screen readers)."""
    dimmed = bubble.graphicsEffect() is not None
    if left_out == dimmed:
        return
    if left_out:
        effect = QGraphicsOpacityEffect(bubble)
        effect.setOpacity(_LEFT_OUT_OPACITY)
        bubble.setGraphicsEffect(effect)
    else:
        bubble.setGraphicsEffect(None)  # pyright: ignore[reportArgumentType]  (None removes it; the stub omits None)
    tip = LEFT_OUT_TIP if left_out else ""
    for widget in (bubble, body):
        widget.setToolTip(tip)
    message.setAccessibleDescription(tip)
