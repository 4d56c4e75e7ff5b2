"""*File › Import Chats…*: one dialog that walks an import through its steps, never blocking the
window: reading the files (the preview, written nowhere), choosing the conversations, importing
them with progress and Cancel, and the report, with Undo Import.

The work runs as operations of `app.operations.chat_history` (threads and store connections of
their own); this dialog only starts them and shows what they report. Closed mid-way, it takes its
operation with it: the job is cancelled and reports to no one. What an import wrote is announced
to the views by the operation itself; `imported(report)` tells the window the report (for Undo
Import and the status bar), and `undoRequested(batch_id)` asks the window to take an import back
out, which answers with `show_undone`.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.importers import preview, run, writer
from app.operations.chat_history import import_chats, preview_chats
from app.operations.operation import Failure, Operation
from ui.dialogs.import_preview import ImportPreview
from ui.dialogs.import_report import ImportReport
from ui.widgets.theme import em, scale_font
from ui.widgets.visibility import set_shown


class Step(StrEnum):
    """Where the dialog is. A StrEnum: `stepChanged` carries it as text."""

    READING = "reading"  # the files, before anything is written
    PREVIEW = "preview"  # the conversations found, to choose from
    IMPORTING = "importing"
    REPORT = "report"  # what the import did, or why it could not go on


class ImportChatsDialog(QDialog):
    imported = Signal(run.ImportReport)  # once an import has ended (cancelled too)
    undoRequested = Signal(int)  # the batch to take back out
    stepChanged = Signal(str)

    def __init__(self, paths: list[Path], database: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ImportChatsDialog")
        self.setWindowTitle("Import Chats")
        self.setAccessibleName("Import chats")
        self.paths = paths
        self.database = database
        self.step = Step.READING
        self.preview: ImportPreview | None = None
        self.report: ImportReport | None = None
        self.batch_id: int | None = None
        self._total = 0
        self._done = 0
        # The step's operation (reading, then importing); its owner is this dialog.
        self.operation: Operation[Any, Any] = preview_chats(self, paths)

        self.heading = QLabel()
        self.heading.setObjectName("ImportHeading")
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        self.heading.setWordWrap(True)
        scale_font(self.heading, 1.05, bold=True)
        self.progress = QProgressBar()
        self.progress.setAccessibleName("Import progress")
        self.pages = QStackedWidget()
        self.buttons = QDialogButtonBox()
        self.import_button = QPushButton("Import")
        self.import_button.setDefault(True)
        self.import_button.setToolTip("Import the ticked conversations")
        self.undo_button = QPushButton("Undo Import")
        self.undo_button.setToolTip("Take every conversation and message of this import out")
        self.cancel_button = QPushButton("Cancel")
        self.close_button = QPushButton("Close")
        for button, role in (
            (self.undo_button, QDialogButtonBox.ButtonRole.ResetRole),
            (self.import_button, QDialogButtonBox.ButtonRole.AcceptRole),
            (self.cancel_button, QDialogButtonBox.ButtonRole.RejectRole),
            (self.close_button, QDialogButtonBox.ButtonRole.RejectRole),
        ):
            self.buttons.addButton(button, role)
        self.import_button.clicked.connect(self.start_import)
        self.cancel_button.clicked.connect(self.cancel)
        self.close_button.clicked.connect(self.close)
        self.undo_button.clicked.connect(self._ask_undo)
        layout = QVBoxLayout(self)
        layout.setSpacing(em(self, 0.6))
        layout.addWidget(self.heading)
        layout.addWidget(self.progress)
        layout.addWidget(self.pages, 1)
        layout.addWidget(self.buttons)
        self.resize(em(self, 46), em(self, 32))
        names = ", ".join(p.name for p in paths)
        self._show_step(Step.READING, f"Reading {names}… Nothing is written yet.")
        self.progress.setRange(0, 0)  # busy: the number of conversations is not known yet
        self.operation.on_success(self._on_previewed).on_failure(self._on_failed).start()

    # -- steps ------------------------------------------------------------------------------

    def _show_step(self, step: Step, heading: str) -> None:
        self.step = step
        self.heading.setText(heading)
        set_shown(self.progress, step in (Step.READING, Step.IMPORTING))
        set_shown(self.import_button, step is Step.PREVIEW)
        set_shown(self.cancel_button, step is not Step.REPORT)
        set_shown(self.close_button, step is Step.REPORT)
        set_shown(self.undo_button, step is Step.REPORT and self.batch_id is not None)
        self.stepChanged.emit(step)

    def _on_previewed(self, result: preview.Preview) -> None:
        if self.step is not Step.READING:
            return
        self.preview = ImportPreview(result)
        self.preview.tree.itemChanged.connect(self._update_import_button)
        self.pages.addWidget(self.preview)
        self.pages.setCurrentWidget(self.preview)
        found = bool(self.preview.rows())
        self._show_step(
            Step.PREVIEW,
            "Untick the conversations to leave out, then Import."
            if found
            else "Nothing in these files can be imported.",
        )
        self._update_import_button()
        self.import_button.setFocus()

    @Slot()
    def _update_import_button(self) -> None:
        count = len(self.preview.chosen()) if self.preview is not None else 0
        self.import_button.setEnabled(count > 0)
        self.import_button.setText(
            f"Import {count:,} Conversation{'' if count == 1 else 's'}" if count else "Import"
        )

    @Slot()
    def start_import(self) -> None:
        if self.step is not Step.PREVIEW or self.preview is None or not self.preview.chosen():
            return
        chosen = self.preview.chosen()
        self._total, self._done = len(chosen), 0
        chosen |= self.preview.empty()  # taken too, so the report lists them as skipped
        self.progress.setRange(0, self._total)
        self.progress.setValue(0)
        self.preview.setEnabled(False)
        self._show_step(
            Step.IMPORTING, "Importing… Cancel keeps the conversations already done, each whole."
        )
        self.cancel_button.setEnabled(True)
        self.operation = (
            import_chats(self, self.database, self.paths, chosen)
            .on_progress(self._on_progress)
            .on_success(self._on_finished)
            .on_failure(self._on_failed)
            .start()
        )

    def _on_progress(self, outcome: writer.Outcome) -> None:
        if outcome.status is not writer.ImportStatus.REFUSED:
            self._done += 1
            self.progress.setValue(min(self._done, self._total))
        if self.operation.cancelled:
            return
        title = outcome.title or outcome.where
        self.heading.setText(f"Importing… {self._done:,} of {self._total:,} done (“{title}”).")

    def _on_finished(self, report: run.ImportReport) -> None:
        self.batch_id = report.batch_id
        self.report = ImportReport(report)
        self.pages.addWidget(self.report)
        self.pages.setCurrentWidget(self.report)
        self._show_step(
            Step.REPORT, "Import cancelled." if report.cancelled else "Import finished."
        )
        self.close_button.setDefault(True)
        self.imported.emit(report)

    def _on_failed(self, failure: Failure) -> None:
        """A failure the import could not put into a report: said in words, nothing half-done
        (each conversation is one transaction)."""
        self._show_step(Step.REPORT, f"The import could not go on: {failure.message}")

    # -- cancel and undo --------------------------------------------------------------------

    @Slot()
    def cancel(self) -> None:
        """While importing: stop after the conversation being written. Before: close."""
        if self.step is Step.IMPORTING:
            self.operation.cancel()
            self.cancel_button.setEnabled(False)
            self.heading.setText("Cancelling after the conversation being written…")
            return
        self.close()

    @Slot()
    def _ask_undo(self) -> None:
        if self.batch_id is not None:
            self.undo_button.setEnabled(False)
            self.heading.setText("Undoing the import…")
            self.undoRequested.emit(self.batch_id)

    def show_undone(self, result: writer.UndoResult) -> None:
        """The window took this import back out."""
        self.batch_id = None
        conversations, messages = result.removed_conversations, result.removed_messages
        text = (
            f"Import undone: {conversations:,} conversation{'' if conversations == 1 else 's'}"
            f" and {messages:,} message{'' if messages == 1 else 's'} taken out."
        )
        if result.kept_messages:
            text += f" {result.kept_messages:,} imported messages stay: you continued from them."
        self._show_step(Step.REPORT, text)

    def reject(self) -> None:
        # Esc or the window's close box while importing cancels instead of leaving the import
        # running unseen; the dialog stays to show the report. Closed while reading, the
        # preview stops.
        if self.step is Step.IMPORTING:
            self.cancel()
            return
        if self.step is Step.READING:
            self.operation.cancel()
        super().reject()
