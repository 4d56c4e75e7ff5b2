"""The choice of a draft model: a smaller model of the same family that guesses a few tokens
ahead, which the chat's model checks at once (the same reply, often faster). One combo box for
a chat's settings and for the per-model defaults in Preferences (`ui.forms.model_defaults`).

Every library model but the main one is offered: whether it shares the main model's tokenizer is
checked by the worker when it is first used, and a refusal says why. Values are library folder
names (a loaded model's id), None for "guess from the conversation" (prompt lookup).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QWidget

if TYPE_CHECKING:
    from app.library.entries import ModelInfo

NO_DRAFT_TEXT = "None — guess from the conversation (prompt lookup)"
DRAFT_TIP = (
    "A smaller model with the same tokenizer (e.g. a smaller one of the same family) guesses "
    "tokens ahead and the chat's model checks several at once: the same reply, often faster"
)


class DraftModelBox(QComboBox):
    """Prompt lookup first, then the library's models other than the main one; `chosen()` is
    a folder name or None."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setToolTip(DRAFT_TIP)
        self.setAccessibleName("Draft model")

    def set_models(
        self, models: Sequence[ModelInfo], main_id: str | None, chosen: str | None
    ) -> None:
        """Offer `models` but `main_id` and select `chosen` (kept, marked, when the library no
        longer has it)."""
        self.clear()
        if chosen == main_id:  # a model cannot usefully draft for itself
            chosen = None
        self.addItem(NO_DRAFT_TEXT, None)
        for info in models:
            if info.path.name != main_id:
                self.addItem(info.name, info.path.name)
                tip = info.problem or f"{info.architecture} · {info.quantization}"
                self.setItemData(self.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        if chosen is not None and self.findData(chosen) < 0:
            self.addItem(f"{chosen} (not in the library)", chosen)
        self.setCurrentIndex(max(0, self.findData(chosen)) if chosen is not None else 0)

    def chosen(self) -> str | None:
        return self.currentData()
