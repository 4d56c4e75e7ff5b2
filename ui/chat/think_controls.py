"""The chat's reasoning switch under the composer: Think on/off, and the effort (low, medium,
high) where the model's template takes one. Hidden for a model whose template reads neither, so
a model without reasoning shows nothing new. The controls only report the person's choice; the
window stores it in the chat's params through the controller."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QToolButton, QWidget

from app.generation.think_settings import DEFAULT_EFFORT, EFFORT, THINK
from ui.widgets.icons import ColorRole, themed_icon
from ui.widgets.theme import scale_font


class ThinkControls(QWidget):
    thinkToggled = Signal(bool)  # Think turned on or off
    effortChosen = Signal(str)  # one of the effort levels `set_support` offered

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ThinkControls")
        self.think_button = QToolButton()
        self.think_button.setObjectName("ThinkButton")
        self.think_button.setText("Think")
        self.think_button.setIcon(themed_icon("lightbulb", ColorRole.PlaceholderText))
        self.think_button.setCheckable(True)
        self.think_button.setAutoRaise(True)
        self.think_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.think_button.setAccessibleName("Think before answering")
        scale_font(self.think_button, 0.85)
        self.effort_box = QComboBox()
        self.effort_box.setObjectName("EffortBox")
        self.effort_box.setAccessibleName("Reasoning effort")
        self.effort_box.setToolTip("How much the model reasons before it answers")
        scale_font(self.effort_box, 0.85)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.think_button)
        row.addWidget(self.effort_box)
        self.think_button.toggled.connect(self._on_think)
        self.effort_box.activated.connect(self._on_effort)
        self.set_support(False, ())

    def set_support(self, think_switch: bool, effort_levels: Sequence[str]) -> None:
        """Which controls the loaded model's template takes; none hides the whole row."""
        self.think_button.setVisible(think_switch)
        self.effort_box.clear()
        self.effort_box.addItems([f"{level.capitalize()} effort" for level in effort_levels])
        for index, level in enumerate(effort_levels):
            self.effort_box.setItemData(index, level)
        self.effort_box.setVisible(bool(effort_levels))
        self.setVisible(think_switch or bool(effort_levels))

    def set_values(self, params: Mapping[str, Any]) -> None:
        """Show a chat's choices (thinking is on unless the chat turned it off)."""
        think = bool(params.get(THINK, True))
        self.think_button.blockSignals(True)
        self.think_button.setChecked(think)
        self.think_button.blockSignals(False)
        self._describe(think)
        index = self.effort_box.findData(params.get(EFFORT, DEFAULT_EFFORT))
        self.effort_box.setCurrentIndex(max(index, 0))

    def _describe(self, think: bool) -> None:
        self.think_button.setToolTip(
            "The model thinks before it answers (click to answer at once)"
            if think
            else "The model answers at once (click to let it think first)"
        )

    @Slot(bool)
    def _on_think(self, checked: bool) -> None:
        self._describe(checked)
        self.thinkToggled.emit(checked)

    @Slot(int)
    def _on_effort(self, index: int) -> None:
        self.effortChosen.emit(str(self.effort_box.itemData(index)))
