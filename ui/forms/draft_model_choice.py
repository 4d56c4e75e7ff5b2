"""The choice of a draft model: a smaller model of the same family that guesses a few tokens
ahead, which the chat's model checks at once (the same reply, often faster). One combo box for
a chat's settings, and the per-model defaults in Preferences.

Every library model but the main one is offered: whether it shares the main model's tokenizer is
checked by the worker when it is first used, and a refusal says why. Values are library folder
names (a loaded model's id), None for "guess from the conversation" (prompt lookup).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QWidget

from ui.text.plain_text import plain_label

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


class DraftDefaults(QGroupBox):
    """Preferences' "Draft models": for a chosen library model, the draft model its chats use
    unless they choose their own. `changes()` holds what the person set, by model."""

    def __init__(
        self,
        models: Sequence[ModelInfo],
        current: str | None,
        draft_for: Callable[[str], str | None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Draft models", parent)
        self.setAccessibleName("Draft models")
        self._models = [m for m in models if m.problem is None]
        self._draft_for = draft_for
        self._changes: dict[str, str | None] = {}
        self.model = QComboBox()
        self.model.setAccessibleName("Model")
        self.model.setToolTip("The model whose default draft model is shown below")
        for info in self._models:
            self.model.addItem(info.name, info.path.name)
        self.model.setCurrentIndex(max(0, self.model.findData(current)))
        self.draft = DraftModelBox()
        self.draft.setAccessibleName("Its draft model")
        hint = plain_label(
            "Chats with this model guess ahead with it unless their own settings choose "
            "otherwise. It must use the same tokenizer; it is checked when first used."
            if len(self._models) > 1
            else "With two models of the same family in the library (File › Download "
            "Model…), the smaller one can guess ahead for the larger."
        )
        hint.setObjectName("PreferencesHint")
        hint.setWordWrap(True)
        form = QFormLayout(self)
        form.addRow("Model", self.model)
        form.addRow("Draft model", self.draft)
        form.addRow("", hint)
        for box in (self.model, self.draft):
            box.setEnabled(len(self._models) > 1)
        self._show_draft()
        self.model.currentIndexChanged.connect(self._show_draft)
        self.draft.activated.connect(self._on_draft_chosen)

    def changes(self) -> dict[str, str | None]:
        """{model folder name: its new default draft, None for prompt lookup}."""
        return dict(self._changes)

    @Slot()
    def _show_draft(self) -> None:
        main = self.model.currentData()
        chosen = self._changes[main] if main in self._changes else (
            self._draft_for(main) if main is not None else None
        )
        self.draft.set_models(self._models, main, chosen)

    @Slot()
    def _on_draft_chosen(self) -> None:
        main = self.model.currentData()
        if main is not None:
            self._changes[main] = self.draft.chosen()
