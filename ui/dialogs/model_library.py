"""The model library window: every model with its facts, rename, delete, make default, and
adding models by importing a GGUF file, importing an MLX folder (copied or linked),
downloading by repo id (after the download dialog's check) or finding the models other apps
hold (`found_models`), each with a progress bar and Cancel.

The additions run as operations (`app.operations.models`); the list refreshes itself (and says
`libraryChanged`) whenever an operation announces that the library changed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QMessageBox,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.library.entries import (
    LibraryError,
    ModelInfo,
    ModelKind,
    delete_model,
    list_models,
    rename_model,
)
from app.library.install import is_published_dhara
from app.operations.changes import Changes, app_changes
from app.operations.models import Addition, add_folder, add_gguf, convert_dhara, download_repo
from ui.dialogs.download_dialog import DownloadDialog
from ui.dialogs.found_models import FoundModelsDialog
from ui.dialogs.found_rows import dialog_button
from ui.dialogs.library_rows import fill_table, model_table
from ui.dialogs.task_progress import TaskProgressDialog, retire_finished, start_task
from ui.text.plain_text import message_box, show_message
from ui.widgets.theme import em

if TYPE_CHECKING:
    from app.generation.worker import InferenceWorker


class ModelLibraryDialog(QDialog):
    modelChosen = Signal(ModelInfo)  # the person wants this model for the chat
    speechModelChosen = Signal(ModelInfo)  # a Whisper model, to dictate with
    defaultChosen = Signal(str)  # a model id: new chats should start with it
    libraryChanged = Signal()

    def __init__(
        self, models_dir: Path, worker: InferenceWorker, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("ModelLibraryDialog")
        self.setWindowTitle("Model Library")
        self.setAccessibleName("Model library")
        self.models_dir = models_dir
        self._worker = worker
        self._models: list[ModelInfo] = []
        self.tasks: list[TaskProgressDialog] = []
        self.loaded_id: str | None = None  # marked in the list (set by the window)
        self.default_id: str | None = None  # marked too (set by the window)
        self.hub_endpoint: str | None = None  # None: huggingface.co, or HF_ENDPOINT when set
        self.found_dialog: FoundModelsDialog | None = None  # made when first opened

        self.table = model_table()

        self.use_button = dialog_button("Use Model", "Load the selected model for this chat")
        self.use_button.setObjectName("PrimaryButton")
        self.rename_button = dialog_button("Rename", "Give the selected model another name")
        self.delete_button = dialog_button("Delete…", "Remove the selected model from the disk")
        self.default_button = dialog_button("Make Default", "New chats start with this model")
        gguf = dialog_button(
            "Import GGUF…", "Convert a .gguf file (Llama, Mistral, Qwen, Gemma 3, Phi-3, Phi-4)"
        )
        folder = dialog_button("Import Folder…", "Add an MLX model folder, copied or linked")
        download = dialog_button("Download…", "Download an MLX model by Hugging Face repo id")
        find = dialog_button(
            "Find Models on This Computer…",
            "List the models LM Studio, Ollama and the Hugging Face cache already hold",
        )
        find.setObjectName("FindModelsButton")

        adders = QHBoxLayout()
        for button in (gguf, folder, download, find):
            adders.addWidget(button)
        adders.addStretch(1)
        actions = QHBoxLayout()
        for button in (self.rename_button, self.delete_button, self.default_button):
            actions.addWidget(button)
        actions.addStretch(1)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.button(QDialogButtonBox.StandardButton.Close).setAccessibleName("Close")
        actions.addWidget(close)
        actions.addWidget(self.use_button)
        layout = QVBoxLayout(self)
        layout.addLayout(adders)
        layout.addWidget(self.table, 1)
        layout.addLayout(actions)
        self.resize(em(self, 42), em(self, 20))

        gguf.clicked.connect(self.ask_import_gguf)
        folder.clicked.connect(self.ask_import_folder)
        download.clicked.connect(self.ask_download)
        find.clicked.connect(self.find_models)
        self.rename_button.clicked.connect(self._start_rename)
        self.delete_button.clicked.connect(self._ask_delete)
        self.default_button.clicked.connect(self._make_default)
        self.use_button.clicked.connect(self._use_selected)
        close.rejected.connect(self.reject)
        self.table.itemChanged.connect(self._on_item_changed)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.table.itemDoubleClicked.connect(self._on_double_click)
        app_changes().subscribe(self, self._on_changes)
        self.refresh()

    # -- the list ---------------------------------------------------------------------------

    def refresh(self, select_folder: Path | None = None) -> None:
        selected = self.selected()
        keep = select_folder or (selected.folder if selected else None)
        self._models = list_models(self.models_dir, kind=None)
        marks = (self.loaded_id, self.default_id)
        fill_table(self.table, self._models, marks, self.palette().placeholderText(), keep)
        self._update_buttons()

    def _on_changes(self, changes: Changes) -> None:
        if changes.model_library:
            self.refresh()
            self.libraryChanged.emit()

    def models(self) -> list[ModelInfo]:
        return list(self._models)

    def selected(self) -> ModelInfo | None:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        return self._models[rows[0].row()] if rows and rows[0].row() < len(self._models) else None

    def select(self, model_id: str) -> None:
        for row, info in enumerate(self._models):
            if info.id == model_id:
                self.table.selectRow(row)

    @Slot()
    def _update_buttons(self) -> None:
        info = self.selected()
        speech = info is not None and info.kind == ModelKind.SPEECH
        self.use_button.setEnabled(info is not None and info.problem is None)
        self.use_button.setText("Use for Dictation" if speech else "Use Model")
        self.use_button.setToolTip(
            "Turn what you dictate into text with the selected speech model"
            if speech
            else "Load the selected model for this chat"
        )
        self.rename_button.setEnabled(info is not None)
        self.delete_button.setEnabled(info is not None)
        self.default_button.setEnabled(
            info is not None and info.id != self.default_id and not speech
        )

    # -- rename, delete, use ----------------------------------------------------------------

    @Slot()
    def _start_rename(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows and (name := self.table.item(rows[0].row(), 0)) is not None:
            self.table.editItem(name)

    @Slot(QTableWidgetItem)
    def _on_item_changed(self, item: QTableWidgetItem) -> None:
        if item.column() != 0:
            return
        info = self._models[item.row()]
        try:
            renamed = rename_model(self.models_dir, info.id, item.text())
        except LibraryError as exc:
            show_message(self, QMessageBox.Icon.Warning, "Rename model", str(exc))
            renamed = info
        self.refresh(select_folder=renamed.folder)
        self.libraryChanged.emit()

    @Slot()
    def _ask_delete(self) -> None:
        info = self.selected()
        if info is None:
            return
        what = "the link (the folder itself stays)" if info.linked else "its files from the disk"
        box = message_box(
            self,
            QMessageBox.Icon.Warning,
            "Delete model",
            f"Delete “{info.name}”?",
            f"This removes {what}. Conversations keep their text.",
        )
        box.setObjectName("ConfirmDeleteModel")
        delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        if box.clickedButton() is delete:
            self.delete(info)

    def delete(self, info: ModelInfo) -> None:
        try:
            delete_model(self.models_dir, info.id)
        except (LibraryError, OSError) as exc:
            show_message(
                self,
                QMessageBox.Icon.Warning,
                "Delete model",
                f"{info.name} could not be deleted: {exc}",
            )
        self.refresh()
        self.libraryChanged.emit()

    @Slot()
    def _make_default(self) -> None:
        info = self.selected()
        if info is not None:
            self.default_id = info.id
            self.refresh()
            self.defaultChosen.emit(info.id)

    @Slot(QTableWidgetItem)
    def _on_double_click(self, item: QTableWidgetItem) -> None:
        if item.column() != 0:
            self._use_selected()

    @Slot()
    def _use_selected(self) -> None:
        info = self.selected()
        if info is not None and info.problem is None:
            if info.kind == ModelKind.SPEECH:
                self.speechModelChosen.emit(info)
            else:
                self.modelChosen.emit(info)
            self.accept()

    # -- adding models ----------------------------------------------------------------------

    @Slot()
    def ask_import_gguf(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Import GGUF", str(Path.home()), "GGUF models (*.gguf)"
        )
        if path:
            self.import_gguf(Path(path))

    @Slot()
    def ask_import_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Import MLX Model Folder", str(Path.home()))
        if not folder:
            return
        if is_published_dhara(folder):  # converted into the library: nothing to link
            self.import_folder(Path(folder), link=False)
            return
        box = message_box(
            self,
            QMessageBox.Icon.Question,
            "Import model folder",
            f"Copy {Path(folder).name} into the library, or link to it where it is?",
            "A linked model stops working if the folder moves.",
        )
        copy = box.addButton("Copy", QMessageBox.ButtonRole.AcceptRole)
        link = box.addButton("Link", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        if box.clickedButton() in (copy, link):
            self.import_folder(Path(folder), link=box.clickedButton() is link)

    @Slot()
    def ask_download(self) -> DownloadDialog:
        dialog = DownloadDialog(self.models_dir, self.hub_endpoint, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.downloadChosen.connect(self.download)
        dialog.open()
        return dialog

    @Slot()
    def find_models(self) -> FoundModelsDialog:
        """The models other apps hold, scanned as the window opens (kept while this is)."""
        if self.found_dialog is None:
            self.found_dialog = FoundModelsDialog(self.models_dir, self._worker, self)
            self.found_dialog.start_scan()
        self.found_dialog.show()
        self.found_dialog.raise_()
        return self.found_dialog

    def import_gguf(self, gguf: Path) -> TaskProgressDialog:
        return self._run(lambda owner: add_gguf(owner, gguf, self.models_dir, self._worker))

    def import_folder(self, folder: Path, link: bool) -> TaskProgressDialog:
        """Copy or link an MLX folder; a published Dhara checkpoint is converted instead (on the
        worker, which runs MLX) and never linked."""
        if is_published_dhara(folder):
            return self._run(
                lambda owner: convert_dhara(owner, folder, self.models_dir, self._worker)
            )
        return self._run(lambda owner: add_folder(owner, folder, self.models_dir, link))

    def download(self, repo_id: str) -> TaskProgressDialog:
        return self._run(
            lambda owner: download_repo(owner, repo_id, self.models_dir, self.hub_endpoint)
        )

    def _run(self, make: Callable[[QObject], Addition]) -> TaskProgressDialog:
        return start_task(make, self, self.tasks, self._on_task_finished)

    @Slot()
    def _on_task_finished(self) -> None:
        """A progress dialog closed: it goes; the entry it added is selected (the list itself
        was refreshed when the addition announced it)."""
        added = retire_finished(self.tasks)
        if added:
            self.refresh(select_folder=added[-1])
