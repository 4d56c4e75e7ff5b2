"""The progress dialog of one model task (an import or a download): a progress bar and Cancel
while it runs, closing itself when the task succeeds and showing the reason when it fails."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QDialog, QHBoxLayout, QProgressBar, QPushButton, QVBoxLayout, QWidget

from ui.dialogs.model_tasks import ModelTask
from ui.text.plain_text import plain_label
from ui.widgets.theme import em


class TaskProgressDialog(QDialog):
    """Progress and Cancel for one ModelTask; closes itself when the job succeeds and shows
    the reason when it fails."""

    def __init__(self, task: ModelTask, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("TaskProgressDialog")
        self.setWindowTitle(task.description)
        self.setAccessibleName(task.description)
        self.task = task
        self.result_path: Path | None = None
        self.error: str | None = None
        self.label = plain_label(f"{task.description}…")  # names a file or a repository
        self.label.setWordWrap(True)
        self.label.setMinimumWidth(em(self, 20))
        self.bar = QProgressBar()
        self.bar.setAccessibleName("Progress")
        self.bar.setRange(0, 0)
        self.button = QPushButton("Cancel")
        self.button.setAccessibleName("Cancel")
        self.button.setToolTip("Stop; nothing is added to the library")
        layout = QVBoxLayout(self)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.button)
        layout.addLayout(row)
        self.button.clicked.connect(self._on_button)
        task.progressed.connect(self._on_progress)
        task.succeeded.connect(self._on_succeeded)
        task.failed.connect(self._on_failed)

    @Slot(object, object)
    def _on_progress(self, done: int, total: int) -> None:
        if total > 0:
            self.bar.setRange(0, 1000)
            self.bar.setValue(min(1000, done * 1000 // total))

    @Slot(object)
    def _on_succeeded(self, path: Path) -> None:
        self.result_path = Path(path)
        self.accept()

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.error = message
        self.label.setText(message)
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        self.button.setText("Close")
        self.button.setAccessibleName("Close")
        self.button.setToolTip("")

    @Slot()
    def _on_button(self) -> None:
        if self.error is not None:
            self.reject()
        else:
            self.task.cancel()
            self.label.setText("Cancelling…")
            self.button.setEnabled(False)

    def reject(self) -> None:
        # Esc or the close box while the job runs means cancel, not "leave it running unseen".
        if self.error is None and self.result_path is None:
            self.task.cancel()
        super().reject()
