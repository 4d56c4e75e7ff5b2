"""The Knowledge page (File › Knowledge…): every knowledge folder with its state, and adding,
re-indexing, cancelling, showing and removing them.

The page owns no indexing: the app's `KnowledgeActivity` (made at start-up, with the watcher and
the rescans) runs every index run, so closing the page stops nothing. The page reads the index's
figures off the GUI thread (`OverviewReader`) when it opens, whenever an operation says the
knowledge changed, and every second while a run goes on; between reads, a run's
progress comes straight from the activity, which costs no read.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QMessageBox,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.knowledge.records import Collection, CollectionState, CollectionStatus
from app.operations.changes import Changes, app_changes
from app.operations.knowledge_activity import KnowledgeActivity
from app.operations.knowledge_folders import KnowledgeFailure
from app.operations.knowledge_overview import FolderOverview, KnowledgeOverview, OverviewReader
from app.settings import Preferences
from ui.knowledge.add_folder_dialog import AddFolderDialog
from ui.knowledge.embedding_choice import EmbeddingChoice, is_text_only
from ui.knowledge.folder_detail import FolderDetail
from ui.knowledge.folder_list import FolderRow, folder_list
from ui.knowledge.folder_state import ShownState, progress_fraction, shown_state
from ui.text.plain_text import message_box, plain_label
from ui.widgets.file_places import show_in_file_manager
from ui.widgets.theme import em

# While a run goes on, the index's figures are read again about this often.
READ_EVERY_S = 1.0
# A quiet moment after the last change before the figures are read once more.
SETTLE_MS = 300
EMPTY = (
    "No knowledge yet. Add a folder of documents (text, Markdown, code, PDF, Word, EPUB, "
    "HTML, CSV, JSON) and chats can read from it: Branchwise indexes it in the background, "
    "keeps the index current as files change, and never changes your files."
)
NOTE = (
    "Indexing runs in the background, pauses while a reply is generating, and goes on when "
    "this page is closed. Your files are only read, never changed."
)


def adding_overview(name: str, root: Path) -> FolderOverview:
    """A folder asked for that the index does not hold yet (its turn has not come)."""
    collection = Collection(-1, name, str(root), False, CollectionState.NEW, None, 0, None)
    return FolderOverview(CollectionStatus(collection, 0, 0, 0, ()), True)


class KnowledgePage(QDialog):
    shown = Signal()  # the figures of the index were shown anew (tests wait on it)

    def __init__(
        self,
        activity: KnowledgeActivity,
        models_dir: Path,
        preferences: Preferences,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("KnowledgePage")
        self.setWindowTitle("Knowledge")
        self.setAccessibleName("Knowledge")
        self.activity = activity
        self.folders = activity.folders
        self.preferences = preferences
        self.overview = KnowledgeOverview(())
        self._read_at = float("-inf")
        self._select_next: str | None = None

        self.add_folder_button = QPushButton("Add Folder…")
        self.add_folder_button.setObjectName("PrimaryButton")
        self.add_folder_button.setToolTip("Index a folder of documents for chats to read")
        self.add_file_button = QPushButton("Add File…")
        self.add_file_button.setToolTip("Index one document for chats to read")
        note = plain_label(NOTE)
        note.setObjectName("FieldHint")
        note.setWordWrap(True)
        self.problem = plain_label("")
        self.problem.setObjectName("KnowledgeProblem")
        self.problem.setWordWrap(True)
        self.problem.hide()
        self.folder_list = folder_list()
        self.detail = FolderDetail()
        self.empty = plain_label(EMPTY)
        self.empty.setObjectName("EmptyHint")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setContentsMargins(em(self, 6), 0, em(self, 6), 0)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.empty)
        self.pages.addWidget(self.detail)
        self.folder_list.setFixedWidth(em(self, 15))
        panes = QHBoxLayout()
        panes.addWidget(self.folder_list)
        panes.addWidget(self.pages, 1)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)

        self.embedding = EmbeddingChoice(models_dir, preferences.knowledge_embedder)
        top = QHBoxLayout()
        top.addWidget(self.add_folder_button)
        top.addWidget(self.add_file_button)
        top.addStretch(1)
        top.addWidget(self.embedding)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(note)
        layout.addWidget(self.problem)
        layout.addLayout(panes, 1)
        layout.addWidget(close)
        self.resize(em(self, 58), em(self, 34))

        self.reader = OverviewReader(self.folders.database, self)
        self.reader.ready.connect(self._show_overview)
        self.reader.failed.connect(self.show_problem)
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self.reader.read)
        self.add_folder_button.clicked.connect(self.ask_add_folder)
        self.add_file_button.clicked.connect(self.ask_add_file)
        self.embedding.chosen.connect(self.choose_embedding)
        self.folder_list.selectedName.connect(lambda _name: self._render())
        self.detail.reindexRequested.connect(self.reindex)
        self.detail.cancelRequested.connect(self.folders.cancel)
        self.detail.revealRequested.connect(self.reveal)
        self.detail.removeRequested.connect(self.ask_remove)
        activity.changed.connect(self._on_activity)
        activity.runFailed.connect(self._on_run_failed)
        app_changes().subscribe(self, self._on_changes)
        self._render()
        self.reader.read()

    # -- what is shown -----------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the index's figures again (off the GUI thread) and show them."""
        self.reader.read()

    def shown_folders(self) -> list[FolderOverview]:
        folders = list(self.overview.folders)
        known = set(self.overview.names())
        for name, root in self.activity.adding.items():
            if name not in known:
                folders.append(adding_overview(name, root))
        return folders

    def state_of(self, name: str) -> ShownState | None:
        for folder in self.shown_folders():
            if folder.status.collection.name == name:
                return shown_state(folder, self.activity.of(name))
        return None

    def _show_overview(self, overview: KnowledgeOverview) -> None:
        self.overview = overview
        self._read_at = time.monotonic()
        self._render()
        self.shown.emit()

    def _render(self) -> None:
        folders = self.shown_folders()
        rows = []
        for folder in folders:
            name = folder.status.collection.name
            activity = self.activity.of(name)
            done, total = progress_fraction(activity.progress)
            percent = round(100 * done / total) if total and activity.running else None
            rows.append(
                FolderRow(
                    name, folder.status.collection.root, shown_state(folder, activity), percent
                )
            )
        if self._select_next is not None and any(row.name == self._select_next for row in rows):
            self.folder_list.blockSignals(True)
            self.folder_list.set_rows(rows)
            self.folder_list.select(self._select_next)
            self.folder_list.blockSignals(False)
            self._select_next = None
        else:
            self.folder_list.set_rows(rows)
        name = self.folder_list.selected()
        chosen = next((f for f in folders if f.status.collection.name == name), None)
        self.pages.setCurrentWidget(self.detail if chosen is not None else self.empty)
        self.folder_list.setVisible(bool(folders))
        if chosen is not None:
            text_only = is_text_only(self.preferences.knowledge_embedder)
            self.detail.show_folder(chosen, self.activity.of(name), self.folders.running, text_only)

    def _on_activity(self, name: str) -> None:
        self._render()
        unknown = bool(name) and name not in self.overview.names()
        if time.monotonic() - self._read_at >= (SETTLE_MS / 1000 if unknown else READ_EVERY_S):
            self.reader.read()
        self._settle.start()

    def _on_changes(self, changes: Changes) -> None:
        if changes.knowledge:
            self.reader.read()

    def _on_run_failed(self, failure: KnowledgeFailure) -> None:
        what = f"“{failure.collection}” could not be indexed" if failure.collection else "Knowledge"
        self.show_problem(f"{what}: {failure.message}")

    def show_problem(self, text: str) -> None:
        self.problem.setText(text)
        self.problem.setVisible(bool(text))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._render()  # the warning colour of the new theme

    # -- the person's actions ------------------------------------------------------------------

    def ask_add_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a Folder to Knowledge")
        if folder:
            self.ask_name(Path(folder))

    def ask_add_file(self) -> None:
        file, _ = QFileDialog.getOpenFileName(self, "Add a File to Knowledge")
        if file:
            self.ask_name(Path(file))

    def ask_name(self, root: Path) -> AddFolderDialog:
        """Ask the name of the new folder over `root`; add it once the person agrees."""
        taken = {f.status.collection.name: f.status.collection.root for f in self.shown_folders()}
        dialog = AddFolderDialog(root.resolve(), taken, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(
            lambda: self.add(dialog.name, dialog.root, dialog.follow_links.isChecked())
        )
        dialog.open()
        return dialog

    def add(self, name: str, root: Path, follow_links: bool = False) -> None:
        self.show_problem("")
        self._select_next = name
        self.activity.add(name, root, follow_links)

    def choose_embedding(self, setting: str) -> None:
        """Every folder searched with the model `setting` names from now on: each is indexed
        again in the background, which makes that model's vectors (search goes on meanwhile)."""
        self.preferences.knowledge_embedder = setting
        self.folders.sync_all()
        self._render()

    def reindex(self, name: str) -> None:
        self.show_problem("")
        self.folders.reindex(name)

    def reveal(self, name: str) -> None:
        folder = self.overview.find(name)
        if folder is not None:
            show_in_file_manager(folder.status.collection.root)

    def ask_remove(self, name: str) -> None:
        folder = self.overview.find(name)
        where = folder.status.collection.root if folder is not None else "its folder"
        box = message_box(
            self,
            QMessageBox.Icon.Question,
            f"Remove “{name}”?",
            f"Branchwise will delete the index of “{name}” and stop watching it. "
            f"Your files are not touched: nothing in {where} is deleted or changed.",
            "Chats that read this knowledge will find nothing more in it; the sources of "
            "earlier replies stay as they were.",
        )
        remove = box.addButton("Remove Index", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        if box.clickedButton() is remove:
            self.remove(name)

    def remove(self, name: str) -> None:
        self.activity.remove(name)
