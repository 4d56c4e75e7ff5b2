"""A reply's Details: where it came from (model, digests, sampling and the seed used, tools,
context, versions; "unknown" for what an imported or older reply cannot say), and *Replay*,
which generates it again and says whether it is identical or where the tokens first differ and
what changed. The replayed reply is kept, as a sibling, only when the person asks."""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.replay.details import ReplyDetails
from app.replay.outcome import ReplayOutcome
from ui.widgets.theme import colors_for, em, is_dark


class ReplyDetailsDialog(QDialog):
    replayRequested = Signal(int)  # message id
    keepRequested = Signal(ReplayOutcome)  # to keep as a sibling

    def __init__(self, details: ReplyDetails, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Reply Details")
        self.setAccessibleName("Where this reply came from")
        self.details = details
        self.outcome: ReplayOutcome | None = None
        self._good: bool | None = None  # how the result reads: None running, else identical
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for label, value in details.rows:
            field = QLabel(value)
            field.setTextFormat(Qt.TextFormat.PlainText)  # paths and imported labels
            field.setWordWrap(True)
            field.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            form.addRow(f"{label}:", field)
        self.note = QLabel(details.why_not or "")
        self.note.setWordWrap(True)
        self.note.setVisible(bool(details.why_not))
        self.replay_result = QLabel()
        self.replay_result.setObjectName("ReplayResult")
        self.replay_result.setWordWrap(True)
        self.replay_result.setTextFormat(Qt.TextFormat.RichText)
        self.replay_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.replay_result.hide()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self.replay_button = QPushButton("Replay")
        self.replay_button.setToolTip(
            details.why_not or "Generate this reply again from what it recorded and compare"
        )
        self.replay_button.setEnabled(details.replayable)
        self.replay_button.clicked.connect(self._replay)
        self.keep_button = QPushButton("Keep as Sibling")
        self.keep_button.setToolTip("Add the replayed reply beside this one, as another version")
        self.keep_button.hide()
        self.keep_button.clicked.connect(lambda: self.keepRequested.emit(self.outcome))
        buttons.addButton(self.replay_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.keep_button, QDialogButtonBox.ButtonRole.ActionRole)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addWidget(self.replay_result)
        layout.addStretch(1)
        layout.addWidget(buttons)
        self.setMinimumWidth(em(self, 40))

    def _replay(self) -> None:
        self.replay_button.setEnabled(False)
        self.keep_button.hide()
        self._show_result("Replaying…", None)
        self.replayRequested.emit(self.details.message_id)

    def show_outcome(self, outcome: ReplayOutcome) -> None:
        self.outcome = outcome
        self.replay_button.setEnabled(True)
        text = html.escape(outcome.summary())
        if outcome.first_difference is not None:
            text += (
                f"<br><br>Recorded: <code>{html.escape(repr(outcome.recorded_piece))}</code>"
                f"<br>Now: <code>{html.escape(repr(outcome.replayed_piece))}</code>"
            )
        self._show_result(text, outcome.identical)
        self.keep_button.setVisible(not outcome.identical)

    def show_failure(self, message: str) -> None:
        self.replay_button.setEnabled(self.details.replayable)
        self._show_result(html.escape(message), False)

    def _show_result(self, text: str, good: bool | None) -> None:
        self._good = good
        self._style_result()
        self.replay_result.setText(text)
        self.replay_result.show()

    def _style_result(self) -> None:
        colors = colors_for(is_dark(self.palette()))
        good = self._good
        colour = colors.text if good is None else colors.accent if good else colors.danger
        self.replay_result.setStyleSheet(
            f"color:{colour}; border:1px solid {colors.border}; border-radius:6px; padding:8px;"
        )

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # the theme changed: restyle the result
            self._style_result()
