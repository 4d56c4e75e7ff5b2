"""Find Models on This Computer: what LM Studio, Ollama and the Hugging Face cache (or a folder
the person picks) already hold, with whether each can run here, and Add. An MLX folder is
linked where it lies; a GGUF is imported, after saying what it will take on the disk.

The scan and each addition are operations (`app.operations.found_models`) this dialog owns:
the window never waits for a scan, and a dialog closed meanwhile hears nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from app.discovery.found import Format, FoundModel, Source
from app.discovery.locations import Location
from app.library.origins import library_origins
from app.operations.changes import Changes, app_changes
from app.operations.found_models import ScanProgress, ScanResult, add_found_model, scan_for_models
from app.operations.operation import Failure, Operation
from app.sizes import format_bytes
from ui.dialogs.found_rows import dialog_button, fill_table, found_table
from ui.dialogs.task_progress import TaskProgressDialog, retire_finished, start_task
from ui.text.plain_text import message_box, plain_label
from ui.widgets.theme import em

if TYPE_CHECKING:
    from app.operations.operation import EngineQueue

INTRO = (
    "Models that LM Studio, Ollama and the Hugging Face cache already hold. An MLX folder is "
    "used where it lies (nothing is copied); a GGUF file is imported into the library."
)


class FoundModelsDialog(QDialog):
    def __init__(
        self,
        models_dir: Path,
        worker: EngineQueue,
        parent: QWidget | None = None,
        locations: Sequence[Location] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("FoundModelsDialog")
        self.setWindowTitle("Find Models on This Computer")
        self.setAccessibleName("Find models on this computer")
        self.models_dir = models_dir
        self._worker = worker
        self._locations = locations  # None: the apps' usual stores
        self.models: list[FoundModel] = []
        self.scan: Operation[ScanResult, ScanProgress] | None = None
        self.tasks: list[TaskProgressDialog] = []

        intro = plain_label(INTRO)
        intro.setWordWrap(True)
        self.state = plain_label("")
        self.state.setObjectName("FoundModelsState")
        self.state.setWordWrap(True)
        self.table = found_table()
        self.rescan_button = dialog_button("Scan Again", "Look in the apps' folders again")
        self.folder_button = dialog_button("Scan a Folder…", "Look for models in a folder you pick")
        self.add_button = dialog_button("Add", "Add the selected models to the library")
        self.add_button.setObjectName("PrimaryButton")
        close = dialog_button("Close", "Close this window")
        buttons = QHBoxLayout()
        for button in (self.rescan_button, self.folder_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(close)
        buttons.addWidget(self.add_button)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.state)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        self.resize(em(self, 58), em(self, 24))

        self.rescan_button.clicked.connect(lambda: self.start_scan(self._locations))
        self.folder_button.clicked.connect(self.ask_folder)
        self.add_button.clicked.connect(self.add_selected)
        close.clicked.connect(self.reject)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.table.itemDoubleClicked.connect(lambda _item: self.add_selected())
        app_changes().subscribe(self, self._on_changes)
        self._update_buttons()

    # -- scanning ---------------------------------------------------------------------------

    def start_scan(self, locations: Sequence[Location] | None = None) -> None:
        if self.scan is not None and self.scan.running:
            self.scan.cancel()
        self.state.setText("Looking for models…")
        self.rescan_button.setEnabled(False)
        self.scan = scan_for_models(self, self.models_dir, locations)
        self.scan.on_progress(self._on_progress).on_success(self.show_result)
        self.scan.on_failure(self._on_failed).start()

    def _on_progress(self, progress: ScanProgress) -> None:
        self.state.setText(f"Looking for models… {progress.found} so far, in {progress.where}")

    def show_result(self, result: ScanResult) -> None:
        self.rescan_button.setEnabled(True)
        # What can be added first, then each app's finds together, by name.
        order = {source: index for index, source in enumerate(Source)}
        self.models = sorted(
            result.models,
            key=lambda m: (not m.runnable, order[m.source], m.name.casefold()),
        )
        self._fill()
        apps = sorted({loc.source.label for loc in result.locations}, key=str.casefold)
        where = " and ".join([", ".join(apps[:-1]), apps[-1]] if len(apps) > 1 else apps)
        self.state.setToolTip(
            "\n".join(f"{loc.source.label}: {loc.path}" for loc in result.locations)
        )
        if not result.locations:
            self.state.setText(
                "No LM Studio, Ollama or Hugging Face model folders were found on this "
                "computer. Use Scan a Folder… to look elsewhere."
            )
        elif not self.models:
            self.state.setText(f"No models were found in {where}.")
        else:
            addable = sum(1 for m in self.models if m.runnable and not m.in_library)
            self.state.setText(
                f"{len(self.models)} found in {where}; {addable} can be added. Hover over a "
                "model for its path, or over this line for the folders read."
            )

    def _on_failed(self, failure: Failure) -> None:
        self.rescan_button.setEnabled(True)
        self.state.setText(f"The scan stopped: {failure.message}")

    @Slot()
    def ask_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, "Scan a Folder for Models", str(Path.home())
        )
        if folder:
            self.start_scan([Location(Source.FOLDER, Path(folder))])

    def _fill(self) -> None:
        fill_table(self.table, self.models, self.palette().placeholderText())
        self._update_buttons()

    def _on_changes(self, changes: Changes) -> None:
        if changes.model_library and self.models:
            origins = library_origins(self.models_dir)
            self.models = [replace(m, in_library=origins.get(m.origin)) for m in self.models]
            self._fill()

    # -- adding -----------------------------------------------------------------------------

    def selected(self) -> list[FoundModel]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.models[row] for row in rows if row < len(self.models)]

    def _addable(self) -> list[FoundModel]:
        return [m for m in self.selected() if m.runnable and not m.in_library]

    @Slot()
    def _update_buttons(self) -> None:
        self.add_button.setEnabled(bool(self._addable()))

    @Slot()
    def add_selected(self) -> list[TaskProgressDialog]:
        chosen = self._addable()
        if not chosen or not self.confirm(chosen):
            return []
        return [self.add(model) for model in chosen]

    def confirm(self, chosen: list[FoundModel]) -> bool:
        """GGUF imports take disk space: say how much before anything is written."""
        imports = [m for m in chosen if m.format == Format.GGUF]
        if not imports:
            return True
        needed = sum(m.disk_needed for m in imports)
        base = [m.name for m in imports if m.chat_template is False]
        details = (
            f"The models folder gets about {format_bytes(needed)} "
            f"(the GGUF files take {format_bytes(sum(m.bytes for m in imports))}, "
            "and are left where they are)."
        )
        if base:
            details += (
                f" {', '.join(base)} has no chat template: a base model, it writes plain "
                "completions (the local server's /v1/completions), not chat replies."
            )
        names = imports[0].name if len(imports) == 1 else f"{len(imports)} GGUF models"
        box = message_box(
            self, QMessageBox.Icon.Question, "Import models", f"Import {names}?", details
        )
        box.setObjectName("ConfirmImportFound")
        accept = box.addButton("Import", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is accept

    def add(self, model: FoundModel) -> TaskProgressDialog:
        return start_task(
            lambda owner: add_found_model(owner, model, self.models_dir, self._worker),
            self,
            self.tasks,
            lambda: retire_finished(self.tasks),
        )
