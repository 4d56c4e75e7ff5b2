"""The choice of what a chat does once it outgrows the model's context, as one combo box for the
chat's settings and for the default in Preferences."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QWidget

from app.settings import OVERFLOW_POLICIES

OVERFLOW_LABELS = {
    "truncate_middle": "Leave out the middle",
    "rolling": "Leave out the oldest",
    "stop": "Stop at the limit",
    "summarise": "Summarise older turns",
}
OVERFLOW_TIPS = {
    "truncate_middle": "Keep the system prompt, the first exchange and the latest ones; leave "
    "whole turns from the middle out of the model's view (they stay in the chat, dimmed)",
    "rolling": "Keep the system prompt and the latest turns; leave the oldest turns out of the "
    "model's view (they stay in the chat, dimmed)",
    "stop": "Leave nothing out: at the limit the model stops and offers to continue in a new chat",
    "summarise": "Near the limit, summarise older turns into a new branch and go on there; the "
    "full chat stays one click away (Preferences › Summaries sets when and how)",
}


def overflow_box(current: str, parent: QWidget | None = None) -> QComboBox:
    """A combo box of the overflow policies with `current` selected; its `currentData()` is
    the chosen policy."""
    box = QComboBox(parent)
    box.setAccessibleName("When the chat outgrows the context")
    box.setToolTip("What happens once the conversation is longer than the model's context")
    for policy in OVERFLOW_POLICIES:
        box.addItem(OVERFLOW_LABELS[policy], policy)
        box.setItemData(box.count() - 1, OVERFLOW_TIPS[policy], Qt.ItemDataRole.ToolTipRole)
    box.setCurrentIndex(max(0, box.findData(current)))
    return box
