"""The sampling controls (temperature, top-p, top-k, min-p, repetition penalty, max tokens), one
set of widgets for a chat's settings and for the defaults of new chats in Preferences, and the
form row both dialogs give each control: its label, and the one-line explanation under it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.chat.controller import DEFAULT_PARAMS
from ui.text.plain_text import plain_label
from ui.widgets.theme import scale_font

MAX_TOKENS_LIMIT = 1_000_000


class HintedField(QWidget):
    """A field with its one-line explanation (`hint`) under it, small and muted."""

    def __init__(self, field: QWidget | QHBoxLayout, hint: str) -> None:
        super().__init__()
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        if isinstance(field, QWidget):
            column.addWidget(field)
        else:
            column.addLayout(field)
        self.hint = plain_label(hint)
        self.hint.setObjectName("FieldHint")
        self.hint.setWordWrap(True)
        scale_font(self.hint, 0.85)
        column.addWidget(self.hint)
        column.addStretch(1)  # spare height goes below the hint, never between it and its field


def add_hinted_row(
    form: QFormLayout, label: str, field: QWidget | QHBoxLayout, control: QWidget | None = None
) -> HintedField:
    """Add `field` to `form` under `label`, explained by its control's tooltip. `control` is
    the widget a person uses (`field` itself unless `field` is a row of several); it is named
    `label` for screen readers."""
    shown = control if control is not None else field
    assert isinstance(shown, QWidget)
    shown.setAccessibleName(label)
    row = HintedField(field, shown.toolTip())
    form.addRow(QLabel(label), row)
    return row


def _double(low: float, high: float, step: float, decimals: int, tip: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(low, high)
    box.setSingleStep(step)
    box.setDecimals(decimals)
    box.setToolTip(tip)
    return box


class SamplingFields:
    """The sampling widgets; `values()` are the params they set, `set_values` shows params
    (missing keys as Branchwise's defaults)."""

    def __init__(self) -> None:
        self.temperature = _double(0.0, 2.0, 0.05, 2, "0 always picks the likeliest token")
        self.top_p = _double(
            0.0,
            1.0,
            0.01,
            2,
            "Sample from the smallest set of tokens whose probabilities add up to this (1 = off)",
        )
        self.top_k = QSpinBox()
        self.top_k.setRange(0, 1000)
        self.top_k.setSpecialValueText("off")
        self.top_k.setToolTip("Sample from this many likeliest tokens (0 = off)")
        self.min_p = _double(
            0.0,
            1.0,
            0.01,
            2,
            "Drop tokens less likely than this share of the likeliest one (0 = off)",
        )
        self.repetition_penalty = _double(
            0.5, 2.0, 0.05, 2, "Above 1 discourages repeating recent tokens (1 = off)"
        )
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(1, MAX_TOKENS_LIMIT)
        self.max_tokens.setSingleStep(64)
        self.max_tokens.setToolTip("The longest reply, in tokens")

    def rows(self) -> list[tuple[str, QWidget]]:
        return [
            ("Temperature", self.temperature),
            ("Top-p", self.top_p),
            ("Top-k", self.top_k),
            ("Min-p", self.min_p),
            ("Repetition penalty", self.repetition_penalty),
            ("Max tokens", self.max_tokens),
        ]

    def add_to(self, form: QFormLayout) -> None:
        for label, field in self.rows():
            add_hinted_row(form, label, field)

    def set_values(self, params: Mapping[str, Any]) -> None:
        """Show `params`; a value that is no number (an imported chat's, say) shows as
        Branchwise's default, and saving replaces it with what is shown."""
        for key, box in self._boxes().items():
            try:
                value = float(params.get(key, DEFAULT_PARAMS[key]))
            except (TypeError, ValueError):
                value = math.nan
            if not math.isfinite(value):
                value = float(DEFAULT_PARAMS[key])
            if isinstance(box, QSpinBox):
                box.setValue(int(value))
            else:
                box.setValue(value)

    def _boxes(self) -> dict[str, QSpinBox | QDoubleSpinBox]:
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "top_k": self.top_k,
            "min_p": self.min_p,
            "repetition_penalty": self.repetition_penalty,
            "max_tokens": self.max_tokens,
        }

    def values(self) -> dict[str, Any]:
        return {
            key: box.value() if isinstance(box, QSpinBox) else round(box.value(), 4)
            for key, box in self._boxes().items()
        }
