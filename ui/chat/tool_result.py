"""A tool's result in the chat, folded to one line (tool, how long it took, how big it is, and
whether it failed, was cut or edited) that unfolds to the text; and the line under a reply
naming the calls it made.

Results come from servers and calls from models: untrusted, shown as plain text only. Running
a call again or editing its result makes a sibling (`‹ k/n ›`), asked of the window by signal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.mcp.results import ToolFailure
from ui.chat.tool_names import tool_text
from ui.text.plain_text import menu_text, plain_label
from ui.widgets.auto_height import fit_to_text
from ui.widgets.fold_toggle import fold_toggle, show_fold
from ui.widgets.theme import em, scale_font
from ui.widgets.view_models import ToolCallView

_MAX_LINES = 16
# A stored result's "failure" is a ToolFailure's value: found by it.
_FAILURES: dict[str, str] = {
    ToolFailure.DENIED: "denied",
    ToolFailure.CANCELLED: "cancelled",
    ToolFailure.TIMEOUT: "timed out",
    ToolFailure.SERVER: "server error",
    ToolFailure.BAD_ARGUMENTS: "bad arguments",
    ToolFailure.TOOL: "failed",
}


def result_summary(tool: str, stats: Mapping[str, Any]) -> str:
    """The folded line, e.g. "add on fx · 0.21 s · 1 character" or "search on web · failed"
    (the server as the result records it)."""
    parts = [tool_text(tool, str(stats.get("server") or ""))]
    failure = stats.get("failure")
    if failure:
        parts.append(_FAILURES.get(str(failure), "failed"))
    duration = stats.get("duration_s")
    if isinstance(duration, int | float) and duration > 0 and failure != ToolFailure.DENIED:
        parts.append(f"{duration:.2f} s" if duration < 10 else f"{duration:.0f} s")
    chars = stats.get("chars")
    if isinstance(chars, int) and failure != ToolFailure.DENIED:
        parts.append(f"{chars:,} character{'s' if chars != 1 else ''}")
    cut = stats.get("cut")
    if isinstance(cut, int) and cut > 0:
        parts.append(f"{cut:,} cut")
    if stats.get("edited"):
        parts.append("edited by you")
    return " · ".join(parts)


def calls_summary(calls: Sequence[ToolCallView]) -> str:
    """The line under a reply that called tools, e.g. "Called add("a": 2, "b": 3) on fx"."""
    lines = []
    for call in calls:
        written = f"{call.name}({_short(call.arguments)})"
        lines.append(f"Called {tool_text(written, call.server)}")
    return "\n".join(lines)


def _short(arguments: str, limit: int = 160) -> str:
    inner = arguments[1:-1] if arguments.startswith("{") and arguments.endswith("}") else arguments
    return inner if len(inner) <= limit else inner[: limit - 1] + "…"


class ToolResultView(QFrame):
    rerunRequested = Signal()
    editSubmitted = Signal(str)  # the result as the person rewrote it

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ToolResult")
        self.setAccessibleName("Tool result")
        self._text = ""
        self.toggle = fold_toggle(self, "ToolResultToggle", 0.92)
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("ToolResultText")
        self.text.setReadOnly(True)
        self.text.setAccessibleName("Tool result text")
        scale_font(self.text, 0.92)
        self.text.document().documentLayout().documentSizeChanged.connect(self._fit)
        self.rerun_button = self._button("Run again")
        self.edit_button = self._button("Edit result")
        self.save_button = self._button("Save as a new result")
        self.cancel_button = self._button("Cancel")
        self.rerun_button.clicked.connect(self.rerunRequested)
        self.edit_button.clicked.connect(self._start_editing)
        self.save_button.clicked.connect(self._save)
        self.cancel_button.clicked.connect(self._stop_editing)
        actions = QHBoxLayout()
        actions.setSpacing(em(self, 0.4))
        for button in (self.rerun_button, self.edit_button, self.save_button, self.cancel_button):
            actions.addWidget(button)
        actions.addStretch(1)
        self.action_row = QWidget(self)
        self.action_row.setLayout(actions)
        actions.setContentsMargins(0, 0, 0, 0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(em(self, 0.25))
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.text)
        layout.addWidget(self.action_row)
        self.toggle.clicked.connect(self._show_open)
        self._stop_editing()
        self._show_open(False)

    @property
    def expanded(self) -> bool:
        return self.toggle.isChecked()

    @property
    def summary(self) -> str:
        return self.toggle.text()

    def set_result(self, tool: str, text: str, stats: Mapping[str, Any]) -> None:
        self._text = text
        self.toggle.setText(result_summary(tool, stats))
        self.toggle.setProperty("failed", bool(stats.get("failure")))
        self.toggle.style().unpolish(self.toggle)
        self.toggle.style().polish(self.toggle)
        if not self.save_button.isVisible():
            self.text.setPlainText(text if text else "(The tool returned no text.)")

    def set_expanded(self, expanded: bool) -> None:
        self._show_open(expanded)

    def _show_open(self, expanded: bool) -> None:
        show_fold(self.toggle, expanded, "the result")
        self.text.setVisible(expanded)
        self.action_row.setVisible(expanded)

    def _start_editing(self) -> None:
        self.text.setReadOnly(False)
        self.text.setPlainText(self._text)
        self._editing(True)
        self.text.setFocus()

    def _stop_editing(self) -> None:
        self.text.setReadOnly(True)
        self.text.setPlainText(self._text)
        self._editing(False)

    def _save(self) -> None:
        edited = self.text.toPlainText()
        self._stop_editing()
        if edited != self._text:
            self.editSubmitted.emit(edited)

    def _editing(self, editing: bool) -> None:
        self.save_button.setVisible(editing)
        self.cancel_button.setVisible(editing)
        self.rerun_button.setVisible(not editing)
        self.edit_button.setVisible(not editing)

    def _fit(self) -> None:
        fit_to_text(self.text, 1, _MAX_LINES)

    def _button(self, text: str) -> QPushButton:
        button = QPushButton(menu_text(text))
        button.setObjectName("ToolResultButton")
        button.setAccessibleName(text)
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        button.setAutoDefault(False)
        return button


def calls_label(calls: Sequence[ToolCallView], parent: QWidget | None = None) -> QLabel:
    label = plain_label(calls_summary(calls), parent)
    label.setObjectName("ToolCallsLine")
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    scale_font(label, 0.92)
    return label
