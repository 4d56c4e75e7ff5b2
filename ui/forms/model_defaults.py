"""Preferences' "Models": for a chosen library model, the draft model its chats guess ahead
with unless they choose their own, and the image detail it is given.

The image detail lives here, per model, rather than in a chat's settings: it is how a model
looks at every picture (the largest size it is shown, a trade of tokens and time for legible
small print), the same in every chat with that model, and it is part of each image's identity
in the caches, so one chat choosing another size would only make its images read again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QWidget

from app.settings import IMAGE_DETAILS
from ui.forms.draft_model_choice import DraftModelBox
from ui.text.plain_text import plain_label

if TYPE_CHECKING:
    from app.library.entries import ModelInfo

OWN_DETAIL_TEXT = "Model's own (default)"
DETAIL_TIP = (
    "The largest size each image is shown to this model at (its longer side). Larger reads "
    "small print better and costs more tokens and time; the model's own is what its "
    "processor takes. Each image's chip shows what it costs."
)


class ImageDetailBox(QComboBox):
    """The model's own sizing first, then the offered longest edges; `chosen()` is pixels or
    None."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Image detail")
        self.setToolTip(DETAIL_TIP)
        self.addItem(OWN_DETAIL_TEXT, None)
        for pixels in IMAGE_DETAILS:
            self.addItem(f"{pixels} px", pixels)

    def choose(self, detail: int | None) -> None:
        self.setCurrentIndex(max(0, self.findData(detail)) if detail is not None else 0)

    def chosen(self) -> int | None:
        return self.currentData()


class ModelDefaults(QGroupBox):
    """`draft_changes()` and `detail_changes()` hold what the person set, by model folder
    name; a model not in them keeps what Preferences had."""

    def __init__(
        self,
        models: Sequence[ModelInfo],
        current: str | None,
        draft_for: Callable[[str], str | None],
        detail_for: Callable[[str], int | None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Models", parent)
        self.setAccessibleName("Models")
        self._models = [m for m in models if m.problem is None]
        self._draft_for = draft_for
        self._detail_for = detail_for
        self._drafts: dict[str, str | None] = {}
        self._details: dict[str, int | None] = {}
        self.model = QComboBox()
        self.model.setAccessibleName("Model")
        self.model.setToolTip("The model whose defaults are shown below")
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
        self.detail = ImageDetailBox()
        form = QFormLayout(self)
        form.addRow("Model", self.model)
        form.addRow("Draft model", self.draft)
        form.addRow("", hint)
        form.addRow("Image detail", self.detail)
        self.model.setEnabled(bool(self._models))
        self.draft.setEnabled(len(self._models) > 1)
        self.detail.setEnabled(bool(self._models))
        self._show_model()
        self.model.currentIndexChanged.connect(self._show_model)
        self.draft.activated.connect(self._on_draft_chosen)
        self.detail.activated.connect(self._on_detail_chosen)

    def draft_changes(self) -> dict[str, str | None]:
        """{model folder name: its new default draft, None for prompt lookup}."""
        return dict(self._drafts)

    def detail_changes(self) -> dict[str, int | None]:
        """{model folder name: its new image detail, None for the model's own}."""
        return dict(self._details)

    @Slot()
    def _show_model(self) -> None:
        main = self.model.currentData()
        if main is None:
            self.draft.set_models(self._models, None, None)
            return
        draft = self._drafts[main] if main in self._drafts else self._draft_for(main)
        self.draft.set_models(self._models, main, draft)
        self.detail.choose(self._details[main] if main in self._details else self._detail_for(main))

    @Slot()
    def _on_draft_chosen(self) -> None:
        main = self.model.currentData()
        if main is not None:
            self._drafts[main] = self.draft.chosen()

    @Slot()
    def _on_detail_chosen(self) -> None:
        main = self.model.currentData()
        if main is not None:
            self._details[main] = self.detail.chosen()
