"""App preferences: the memory budget for layer caches, and the theme."""

from __future__ import annotations

import psutil
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from ui.theme import THEME_MODES, ThemeMode, em

GB = 1_000_000_000
_THEME_LABELS = {"system": "Follow the system", "light": "Light", "dark": "Dark"}


class PreferencesDialog(QDialog):
    def __init__(
        self, cache_budget_bytes: int, theme: ThemeMode, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("PreferencesDialog")
        self.setWindowTitle("Preferences")
        self.setAccessibleName("Preferences")
        total_gb = psutil.virtual_memory().total / GB

        self.budget = QDoubleSpinBox()
        self.budget.setAccessibleName("Cache memory budget")
        self.budget.setRange(0.0, round(total_gb, 1))
        self.budget.setDecimals(1)
        self.budget.setSingleStep(0.5)
        self.budget.setSuffix(" GB")
        self.budget.setValue(cache_budget_bytes / GB)
        self.budget.setToolTip(
            "Memory the layer caches may keep so that follow-ups, regenerations and branch "
            "switches start at once; the least recently used go first. 0 keeps none."
        )
        hint = QLabel(f"This computer has {total_gb:.1f} GB of memory.")
        hint.setObjectName("PreferencesHint")

        self.theme = QComboBox()
        self.theme.setAccessibleName("Theme")
        self.theme.setToolTip("Light, dark, or whatever the system uses")
        for mode in THEME_MODES:
            self.theme.addItem(_THEME_LABELS[mode], mode)
        self.theme.setCurrentIndex(self.theme.findData(theme))

        form = QFormLayout()
        form.addRow("Cache memory budget", self.budget)
        form.addRow("", hint)
        form.addRow("Theme", self.theme)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        for button in buttons.buttons():
            button.setAccessibleName(button.text().replace("&", ""))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.setMinimumWidth(em(self, 22))

    def cache_budget_bytes(self) -> int:
        return round(self.budget.value() * GB)

    def theme_mode(self) -> ThemeMode:
        return self.theme.currentData()
