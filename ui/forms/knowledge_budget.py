"""How much of a message its knowledge excerpts may take, in the chat model's tokens: one field for
new chats' defaults (Preferences › New chats) and for one chat's settings. 0 stands for the
default, a quarter of the chat's context, and is kept as no value at all."""

from __future__ import annotations

from PySide6.QtWidgets import QSpinBox

QUARTER = "A quarter of the chat's context"
_MAX_BUDGET = 262_144


def budget_box(budget: int) -> QSpinBox:
    """The most a message's knowledge excerpts may take, in tokens (0: a quarter of the chat's
    context), for new chats' defaults and for one chat's settings."""
    box = QSpinBox()
    box.setObjectName("KnowledgeBudget")
    box.setAccessibleName("Knowledge per message")
    box.setRange(0, _MAX_BUDGET)
    box.setSingleStep(256)
    box.setSuffix(" tokens")
    box.setSpecialValueText(QUARTER)
    box.setValue(budget)
    box.setToolTip(
        "The most a message's knowledge excerpts take of the prompt, in the chat model's tokens"
    )
    return box
