"""One knowledge folder on the Knowledge page: its name, where it is (and whether it is there),
its state with the progress of a run under way, its files, chunks, failures and embedding model,
the actions on it (Re-index, Cancel, Show in File Manager, Remove…) and the list of its files
that are not indexed, with reasons. It shows what it is given and says what the person asks
for by its signals; the page does the rest."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.library.embedded_model import EMBEDDER_NAME
from app.operations.knowledge_activity import FolderActivity
from app.operations.knowledge_overview import FolderOverview
from ui.knowledge.failure_list import FailureList, NotIndexed
from ui.knowledge.folder_state import (
    WARNINGS,
    ShownState,
    progress_fraction,
    shown_state,
    state_line,
)
from ui.text.plain_text import plain_label
from ui.widgets.theme import em, scale_font


def model_name(model_id: str) -> str:
    """An embedding model's id as a person reads it: the built-in model by name, another by its
    folder's name (the digest that ends an id tells versions apart, not models)."""
    if model_id.startswith(EMBEDDER_NAME):
        return "the built-in WordLlama"
    return re.sub(r"-[0-9a-f]{12,}$", "", model_id)


def search_line(folder: FolderOverview, text_only: bool) -> str:
    """How the folder is searched: by its text alone (the preference, or no vectors made yet),
    or with vectors (and how many so far)."""
    status = folder.status
    model = status.collection.embedding_model
    if text_only or not model:
        return "Text search (BM25)"
    if status.chunks and status.embedded_chunks < status.chunks:
        return (
            f"Text search and vectors of {model_name(model)} "
            f"({status.embedded_chunks:,} of {status.chunks:,} chunks so far)"
        )
    return f"Text search and vectors of {model_name(model)}"


def not_indexed(folder: FolderOverview, activity: FolderActivity) -> list[NotIndexed]:
    """The folder's failures as the index holds them, then what its last run passed over."""
    rows = [NotIndexed(path, reason) for path, reason in folder.status.failed]
    report = activity.last.report if activity.last is not None else None
    if report is not None:
        rows += [NotIndexed(path, reason, passed_over=True) for path, reason in report.skipped]
    return rows


class FolderDetail(QWidget):
    reindexRequested = Signal(str)
    cancelRequested = Signal(str)
    revealRequested = Signal(str)
    removeRequested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("KnowledgeDetail")
        self.name = ""
        self.state = ShownState.NEW
        self.title = plain_label("")
        self.title.setObjectName("KnowledgeTitle")
        scale_font(self.title, 1.3, bold=True)
        self.root = plain_label("")
        self.root.setObjectName("KnowledgeRoot")
        self.root.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.root.setWordWrap(True)
        self.offline_badge = plain_label("Offline")
        self.offline_badge.setObjectName("KnowledgeBadge")
        self.state_label = plain_label("")
        self.state_label.setObjectName("KnowledgeState")
        self.state_label.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setAccessibleName("Indexing progress")
        self.bar.setTextVisible(False)
        self.bar.setMaximumHeight(em(self, 0.5))
        self.files = plain_label("")
        self.chunks = plain_label("")
        self.failures = plain_label("")
        self.search = plain_label("")
        self.search.setWordWrap(True)
        self.reindex_button = self._button(
            "Re-index", "Read again what changed and the files that failed", self.reindexRequested
        )
        self.cancel_button = self._button(
            "Cancel", "Stop indexing; what is indexed so far stays", self.cancelRequested
        )
        self.reveal_button = self._button(
            "Show in File Manager", "Open the folder in the file manager", self.revealRequested
        )
        self.remove_button = self._button(
            "Remove…", "Remove this folder's index (your files stay)", self.removeRequested
        )
        self.failure_list = FailureList()

        heading = QHBoxLayout()
        heading.addWidget(self.title)
        heading.addWidget(self.offline_badge)
        heading.addStretch(1)
        facts = QFormLayout()
        facts.setLabelAlignment(Qt.AlignmentFlag.AlignLeft)
        for label, value in (
            ("Files indexed:", self.files),
            ("Chunks:", self.chunks),
            ("Not indexed:", self.failures),
            ("Search:", self.search),
        ):
            facts.addRow(label, value)
        actions = QHBoxLayout()
        for button in (self.reindex_button, self.cancel_button, self.reveal_button):
            actions.addWidget(button)
        actions.addStretch(1)
        actions.addWidget(self.remove_button)
        self.all_indexed = plain_label("Every file found is indexed.")
        self.all_indexed.setObjectName("FieldHint")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(em(self, 0.8), 0, 0, 0)
        layout.setSpacing(em(self, 0.5))
        layout.addLayout(heading)
        layout.addWidget(self.root)
        layout.addSpacing(em(self, 0.3))
        layout.addWidget(self.state_label)
        layout.addWidget(self.bar)
        layout.addSpacing(em(self, 0.3))
        layout.addLayout(facts)
        layout.addSpacing(em(self, 0.3))
        layout.addLayout(actions)
        layout.addSpacing(em(self, 0.5))
        layout.addWidget(self.failure_list, 100)
        layout.addWidget(self.all_indexed)
        layout.addStretch(1)

    def _button(self, text: str, tip: str, asked: SignalInstance) -> QPushButton:
        button = QPushButton(text)
        button.setAccessibleName(text.rstrip("…"))
        button.setToolTip(tip)
        button.clicked.connect(lambda: asked.emit(self.name))
        return button

    def show_folder(
        self,
        folder: FolderOverview,
        activity: FolderActivity,
        waiting_for: str | None,
        text_only: bool,
    ) -> None:
        status = folder.status
        collection = status.collection
        self.name = collection.name
        self.state = state = shown_state(folder, activity)
        self.title.setText(collection.name)
        self.root.setText(collection.root)
        self.root.setToolTip("Links inside it are followed" if collection.follow_links else "")
        self.offline_badge.setVisible(state is ShownState.OFFLINE)
        self.state_label.setText(state_line(state, folder, activity, waiting_for))
        _mark(self.state_label, "warning" if state in WARNINGS else "")
        done, total = progress_fraction(activity.progress)
        busy = state in (ShownState.INDEXING, ShownState.PAUSED)
        self.bar.setVisible(busy)
        self.bar.setRange(0, total)
        self.bar.setValue(done)
        self.files.setText(f"{status.files:,}")
        self.chunks.setText(f"{status.chunks:,}")
        self.failures.setText(f"{len(status.failed):,}")
        self.search.setText(search_line(folder, text_only))
        self.search.setToolTip(status.collection.embedding_model or "")
        running = activity.running or activity.waiting
        self.reindex_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.reveal_button.setEnabled(folder.online)
        self.reveal_button.setToolTip(
            "Open the folder in the file manager" if folder.online else "The folder is not there"
        )
        rows = not_indexed(folder, activity)
        self.failure_list.set_rows(rows, collection.root)
        self.failure_list.setVisible(bool(rows))
        self.all_indexed.setVisible(not rows and state is ShownState.UP_TO_DATE)


def _mark(label: QLabel, kind: str) -> None:
    """Set the label's `kind` for the style sheet (a warning's colour), repolished if it
    changed."""
    if label.property("kind") != kind:
        label.setProperty("kind", kind)
        label.style().unpolish(label)
        label.style().polish(label)
