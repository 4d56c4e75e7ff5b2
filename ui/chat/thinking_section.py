"""A reply's reasoning, folded above its answer.

While the model thinks the section is open and grows with the reasoning ("Thinking…"); once the
answer starts it folds itself and says how long the model thought and how many tokens that took.
A finished reply opens folded. Once the person opens or folds it, the section stays as they left
it. Model output is untrusted: the reasoning is shown as plain text, never as rich text.

Reasoning runs to thousands of tokens, so it streams into a read-only plain-text editor by
appending only what is new (a label would lay the whole text out again on every update: 0.6 s
at 18,000 characters here), growing to `_MAX_LINES` and then scrolling with the newest line in
view.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QFrame, QPlainTextEdit, QVBoxLayout, QWidget

from ui.widgets.auto_height import fit_to_text
from ui.widgets.fold_toggle import fold_toggle, show_fold
from ui.widgets.theme import em, scale_font

_MAX_LINES = 14


def thinking_summary(stats: Mapping[str, float], thinking: bool) -> str:
    """The section's heading, e.g. "Thought for 3.2 s · 120 tokens"."""
    if thinking:
        return "Thinking…"
    if "reasoning_s" not in stats:
        return "Thoughts"  # a stopped or interrupted reply has no count
    seconds = float(stats["reasoning_s"])
    parts = [f"Thought for {seconds:.{1 if seconds < 10 else 0}f} s"]
    if "reasoning_tokens" in stats:
        tokens = int(stats["reasoning_tokens"])
        parts.append(f"{tokens:,} token{'s' if tokens != 1 else ''}")
    return " · ".join(parts)


class ThinkingSection(QFrame):
    toggled = Signal(bool)  # opened (True) or folded by the person

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ThinkingSection")
        self.setAccessibleName("Reasoning")
        self._thinking = False
        self._shown = ""  # the text in the editor (reading it back would copy it every time)
        self._chosen = False  # the person opened or folded it: leave it so
        self.toggle = fold_toggle(self, "ThinkingToggle", 0.9)
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("ThinkingText")
        self.text.setReadOnly(True)
        self.text.setFrameShape(QFrame.Shape.NoFrame)
        self.text.setAccessibleName("Reasoning text")
        scale_font(self.text, 0.92)
        # Re-fit whenever the lines change: new text, or a new width that wraps them anew
        # (e.g. when the section is first opened).
        self.text.document().documentLayout().documentSizeChanged.connect(self._fit)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, em(self, 0.3))
        layout.setSpacing(em(self, 0.2))
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.text)
        self.toggle.clicked.connect(self._on_clicked)
        self._show_open(False)

    @property
    def expanded(self) -> bool:
        return self.toggle.isChecked()

    @property
    def summary(self) -> str:
        return self.toggle.text()

    def set_reasoning(self, text: str, thinking: bool, stats: Mapping[str, float]) -> None:
        """Show `text`; open while `thinking`, folded from when the answer starts."""
        self._show_text(text, follow=thinking)
        self.toggle.setText(thinking_summary(stats, thinking))
        if not self._chosen and (thinking or self._thinking):
            self._show_open(thinking)
        self._thinking = thinking

    def _show_text(self, text: str, follow: bool) -> None:
        shown = self._shown
        if text == shown:
            return
        if shown and text.startswith(shown):
            cursor = QTextCursor(self.text.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(text[len(shown) :])
        else:
            self.text.setPlainText(text)
        self._shown = text
        if follow:
            bar = self.text.verticalScrollBar()
            bar.setValue(bar.maximum())

    def _fit(self) -> None:
        fit_to_text(self.text, 1, _MAX_LINES)

    def set_expanded(self, expanded: bool) -> None:
        """Open or fold it as the person would (it then stays so)."""
        self._chosen = True
        self._show_open(expanded)

    def _on_clicked(self, checked: bool) -> None:
        self._chosen = True
        self._show_open(checked)
        self.toggled.emit(checked)

    def _show_open(self, expanded: bool) -> None:
        show_fold(self.toggle, expanded, "the reasoning")
        self.text.setVisible(expanded)
