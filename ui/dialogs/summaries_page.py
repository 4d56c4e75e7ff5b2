"""Preferences › Summaries: how a long chat is summarised into a new branch (`app.compaction`):
the turns kept word for word below the summary, the share of the context at which *Summarise
older turns* acts, whether it then summarises by itself or proposes to, and the model that
writes summaries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLabel, QSpinBox, QWidget

from app.settings import KEEP_TURNS_RANGE, THRESHOLD_RANGE, SummarySettings

if TYPE_CHECKING:
    from app.library.entries import ModelInfo


class SummariesPage(QWidget):
    def __init__(
        self,
        settings: SummarySettings,
        models: Sequence[ModelInfo] = (),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setAccessibleName("Summaries")
        self.keep = QSpinBox()
        self.keep.setAccessibleName("Turns kept word for word")
        self.keep.setRange(*KEEP_TURNS_RANGE)
        self.keep.setValue(settings.keep_turns)
        self.keep.setToolTip(
            "The last exchanges the new branch repeats as they were, after the summary"
        )
        self.threshold = QSpinBox()
        self.threshold.setAccessibleName("Summarise at this share of the context")
        self.threshold.setRange(round(THRESHOLD_RANGE[0] * 100), round(THRESHOLD_RANGE[1] * 100))
        self.threshold.setSuffix(" %")
        self.threshold.setValue(round(settings.threshold * 100))
        self.threshold.setToolTip(
            "For chats set to “Summarise older turns”: once the last reply and its prompt take "
            "this share of the context"
        )
        self.automatic = QCheckBox("Summarise by itself before the next reply")
        self.automatic.setAccessibleName("Summarise by itself")
        self.automatic.setChecked(settings.automatic)
        self.automatic.setToolTip(
            "On: the next message is answered on a new, summarised branch. Off: a notice "
            "proposes it. Either way the full chat is kept, one click away."
        )
        self.model = QComboBox()
        self.model.setAccessibleName("Model that writes summaries")
        self.model.addItem("The chat's own model", None)
        for info in models:
            if info.problem is None:
                self.model.addItem(info.name, info.path.name)
        self.model.setCurrentIndex(max(0, self.model.findData(settings.model_id)))
        self.model.setToolTip(
            "A smaller model writes summaries faster; the chat's model reads the whole "
            "conversation from its cache"
        )
        hint = QLabel(
            "Summarise up to Here (on any message) and /compact (in the message box) make a new "
            "branch beside the full chat, which stays as it was."
        )
        hint.setObjectName("PreferencesHint")
        hint.setWordWrap(True)
        form = QFormLayout(self)
        form.addRow("Turns kept word for word", self.keep)
        form.addRow("Summarise older turns at", self.threshold)
        form.addRow("", self.automatic)
        form.addRow("Written by", self.model)
        form.addRow("", hint)

    def settings(self) -> SummarySettings:
        return SummarySettings(
            keep_turns=self.keep.value(),
            threshold=self.threshold.value() / 100,
            automatic=self.automatic.isChecked(),
            model_id=self.model.currentData(),
        )
