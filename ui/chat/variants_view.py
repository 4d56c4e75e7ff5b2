"""Regenerate ×N on screen: the versions stream side by side, one column each.

Each column shows its version's text as it arrives, its stats once it ends (tokens, speed, time
to first token, or "stopped"), a Stop of its own and a "Keep this one" button that makes it the
active branch. Closing the window stops what is still running (the text so far is kept by the
app, marked stopped). Plain text while streaming: cheap to update, and model output is never
interpreted as markup here.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ui.widgets.theme import em


def stats_line(status: str, stats: dict[str, Any] | None) -> str:
    """A short summary of a finished version for its column."""
    if status == "error":
        return "Failed"
    stats = stats or {}
    tokens = int(stats.get("generated_tokens") or 0)
    parts = [f"{tokens} tokens"]
    if stats.get("decode_tps"):
        parts.append(f"{stats['decode_tps']:.1f} tok/s")
    if stats.get("ttft_s"):
        parts.append(f"first token {stats['ttft_s']:.2f} s")
    if status == "stopped":
        parts.append("stopped")
    return " · ".join(parts)


class _Column(QWidget):
    def __init__(self, index: int, seed: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel(f"Version {index + 1} · seed {seed}")
        self.title.setStyleSheet("font-weight:600;")
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setAccessibleName(f"Version {index + 1} text")
        self.stats = QLabel("Generating…")
        self.stats.setAccessibleName(f"Version {index + 1} stats")
        self.stop = QPushButton("Stop")
        self.stop.setAccessibleName(f"Stop version {index + 1}")
        self.keep = QPushButton("Keep this one")
        self.keep.setAccessibleName(f"Keep version {index + 1} as the active branch")
        buttons = QHBoxLayout()
        buttons.addWidget(self.stop)
        buttons.addStretch(1)
        buttons.addWidget(self.keep)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.stats)
        layout.addLayout(buttons)


class VariantsView(QDialog):
    stopRequested = Signal(int)  # a version's index
    keepRequested = Signal(int)
    closedWhileRunning = Signal()

    def __init__(self, seeds: list[int], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"{len(seeds)} Versions Side by Side")
        self.setAccessibleName("Versions of the reply, side by side")
        self.setWindowFlag(Qt.WindowType.Tool, False)
        self.columns = [_Column(i, seed, self) for i, seed in enumerate(seeds)]
        row = QHBoxLayout()
        for i, column in enumerate(self.columns):
            column.stop.clicked.connect(lambda _=False, i=i: self.stopRequested.emit(i))
            column.keep.clicked.connect(lambda _=False, i=i: self.keepRequested.emit(i))
            row.addWidget(column, 1)
        hint = QLabel("Every version is kept as a sibling: ‹ k/n › steps through them later.")
        hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(hint)
        layout.addLayout(row, 1)
        self._running = set(range(len(seeds)))
        self.resize(em(self, 22) * len(seeds), em(self, 30))

    def set_text(self, index: int, text: str) -> None:
        """The version's whole text so far (the view keeps the scroll at the end)."""
        edit = self.columns[index].text
        edit.setPlainText(text)
        bar = edit.verticalScrollBar()
        bar.setValue(bar.maximum())

    def set_finished(self, index: int, status: str, stats: dict[str, Any] | None) -> None:
        column = self.columns[index]
        column.stats.setText(stats_line(status, stats))
        column.stop.setEnabled(False)
        self._running.discard(index)

    def is_running(self) -> bool:
        return bool(self._running)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._running:
            self.closedWhileRunning.emit()
        super().closeEvent(event)
