"""An imported reply's tool trace (the code a ChatGPT turn ran and what it printed), folded
under its own heading like the reasoning. It is kept for the person to read: never part of the
answer and never sent to a model. Shown as plain text, as it comes from an export."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from ui.chat.thinking_section import ThinkingSection

HEADING = "Tool calls (code and output)"


class TraceSection(ThinkingSection):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("TraceSection")
        self.setAccessibleName("Tool calls")
        self.text.setAccessibleName("Tool code and output")
        self.toggle.setObjectName("TraceToggle")

    def set_trace(self, text: str) -> None:
        """Show `text`, folded until the person opens it."""
        self.set_reasoning(text, thinking=False, stats={})
        self.toggle.setText(HEADING)

    def _show_open(self, expanded: bool) -> None:
        super()._show_open(expanded)
        self.toggle.setToolTip(
            "Hide the tool calls"
            if expanded
            else "Show the code this reply ran and its output (never sent to a model)"
        )
