"""A chat settings dialog's preset row: the presets to fill the form from (a chat's own settings
with "None"), and the button that saves what the form shows as a new preset."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QPushButton, QWidget

if TYPE_CHECKING:
    from app.store.presets import Preset

NO_PRESET = "None: this chat's own settings"


class PresetChoice(QWidget):
    chosen = Signal(int)  # a preset's id: fill the form from it
    saveRequested = Signal()

    def __init__(self, presets: Sequence[Preset], current: int | None) -> None:
        super().__init__()
        self.box = QComboBox()
        self.box.setToolTip(
            "Fill these settings from a preset; the chat then shows when it drifts from it"
        )
        self.box.addItem(NO_PRESET, None)
        for preset in presets:
            self.box.addItem(preset.name, preset.id)
        self.box.setCurrentIndex(max(0, self.box.findData(current)))
        self.save = QPushButton("Save as Preset…")
        self.save.setAccessibleName("Save these settings as a preset")
        self.save.setToolTip("Keep the settings shown here as a new preset")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.box, 1)
        row.addWidget(self.save)
        self.box.activated.connect(self._on_activated)
        self.save.clicked.connect(self.saveRequested)

    def current(self) -> int | None:
        value = self.box.currentData()
        return None if value is None else int(value)

    def add(self, preset: Preset) -> None:
        """A preset saved meanwhile, now the chosen one."""
        self.box.addItem(preset.name, preset.id)
        self.box.setCurrentIndex(self.box.count() - 1)

    def _on_activated(self, index: int) -> None:
        value = self.box.itemData(index)
        if value is not None:
            self.chosen.emit(int(value))
