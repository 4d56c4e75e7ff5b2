"""The Knowledge page's choice of embedding model for every folder
(`Preferences.knowledge_embedder`, as `app.knowledge.embedder_choice` reads it): text search
alone, the built-in model, or an embedding model of the library; one that cannot be used now is
listed, greyed, with why.

Choosing another model says so (`chosen`); the page then has every folder indexed again, which
computes the new model's vectors in the background while search goes on with BM25 and the
vectors made so far.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QWidget

from app.knowledge.embedder_choice import EmbedderChoice, EmbedderKind, embedder_options
from ui.text.plain_text import literal, plain_label

TIP = (
    "How chats find passages: text search (BM25) always, fused with the vectors of an "
    "embedding model when one is chosen. A new model's vectors are computed in the background."
)


class EmbeddingChoice(QWidget):
    chosen = Signal(str)  # the preference's new text ("none", "builtin", "model:<id>")

    def __init__(self, models_dir: Path, setting: str | None) -> None:
        super().__init__()
        self._models_dir = models_dir
        self.combo = QComboBox()
        self.combo.setObjectName("EmbeddingChoice")
        self.combo.setAccessibleName("Embedding model")
        self.combo.setToolTip(TIP)
        label = plain_label("Embedding model:")
        label.setBuddy(self.combo)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(label)
        layout.addWidget(self.combo)
        self.fill(setting)
        self.combo.activated.connect(self._on_activated)

    @property
    def setting(self) -> str:
        return str(self.combo.currentData())

    def fill(self, setting: str | None) -> None:
        """List the options as they are now (the library may have changed), `setting` shown."""
        current = EmbedderChoice.from_setting(setting).setting
        self.combo.clear()
        model = self.combo.model()
        for option in embedder_options(self._models_dir):
            label = option.label if option.problem is None else f"{option.label} ({option.problem})"
            self.combo.addItem(label, option.choice.setting)
            row = self.combo.count() - 1
            if option.problem is not None and isinstance(model, QStandardItemModel):
                item = model.item(row)
                item.setEnabled(option.choice.setting == current)  # shown when chosen before
                item.setToolTip(literal(option.problem))
        index = self.combo.findData(current)
        if index < 0:  # a library model since removed: still what the preference says
            self.combo.addItem(f"{current} (no longer in the library)", current)
            index = self.combo.count() - 1
        self.combo.setCurrentIndex(index)
        self._shown = current

    def _on_activated(self, _index: int) -> None:
        if self.setting != self._shown:
            self._shown = self.setting
            self.chosen.emit(self.setting)


def is_text_only(setting: str | None) -> bool:
    """Whether the preference is text search alone (the vectors kept are not used)."""
    return EmbedderChoice.from_setting(setting).kind is EmbedderKind.NONE
