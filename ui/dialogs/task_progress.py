"""The progress dialog of one model addition (an import or a download): a progress bar and
Cancel while it runs, closing itself when the addition succeeds and showing the reason when it
fails.

The dialog owns its operation: closed, it cancels the job, which then reports to no one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QDialog, QHBoxLayout, QProgressBar, QPushButton, QVBoxLayout, QWidget

from app.operations.models import Addition, Transferred
from app.operations.operation import Failure
from ui.text.plain_text import plain_label
from ui.widgets.theme import em


class TaskProgressDialog(QDialog):
    """Progress and Cancel for the addition `make(self)` returns; `start()` runs it."""

    def __init__(self, make: Callable[[QObject], Addition], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.task = make(self)
        description = self.task.description
        self.setObjectName("TaskProgressDialog")
        self.setWindowTitle(description)
        self.setAccessibleName(description)
        self.result_path: Path | None = None
        self.error: str | None = None
        self.label = plain_label(f"{description}…")  # names a file or a repository
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
        self.task.on_progress(self._on_progress).on_success(self._on_succeeded).on_failure(
            self._on_failed
        )

    def start(self) -> None:
        self.task.start()

    def _on_progress(self, progress: Transferred) -> None:
        if progress.total > 0:
            self.bar.setRange(0, 1000)
            self.bar.setValue(min(1000, progress.done * 1000 // progress.total))

    def _on_succeeded(self, path: Path) -> None:
        self.result_path = path
        self.accept()

    def _on_failed(self, failure: Failure) -> None:
        self.error = failure.message
        self.label.setText(failure.message)
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


def start_task(
    make: Callable[[QObject], Addition],
    parent: QWidget,
    tasks: list[TaskProgressDialog],
    on_finished: Callable[[], object],
) -> TaskProgressDialog:
    """Open a progress dialog for the addition `make` returns, start it, and keep it in `tasks`
    until `retire_finished` lets it go."""
    dialog = TaskProgressDialog(make, parent)
    dialog.finished.connect(on_finished)
    tasks.append(dialog)
    dialog.open()
    dialog.start()
    return dialog


def retire_finished(tasks: list[TaskProgressDialog]) -> list[Path]:
    """Take the closed dialogs out of `tasks` (deleted later) and return the entries they
    added, in order."""
    done = [d for d in tasks if not d.isVisible()]
    tasks[:] = [d for d in tasks if d.isVisible()]
    for dialog in done:
        dialog.deleteLater()
    return [d.result_path for d in done if d.result_path is not None]
