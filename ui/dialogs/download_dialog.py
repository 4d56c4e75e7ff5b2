"""The download dialog: a repository id, then a look at what downloading it means before any
file is transferred: the files and their sizes, the total, what model it is, whether its
weights fit in memory and whether the disk has room.

The hub is asked off the GUI thread (the network may be slow or down), as an operation
(`app.operations.models.check_download`) this dialog owns: closed meanwhile, it hears nothing.
Download stays disabled until a check of the id in the box succeeded.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.library.download_fit import DownloadFit, MemoryFit
from app.operations.models import DownloadCheck, check_download
from app.operations.operation import Failure
from app.sizes import format_bytes
from ui.text.plain_text import plain_label
from ui.widgets.theme import em

if TYPE_CHECKING:
    from app.library.hub_listing import RepoListing

EXAMPLE = "mlx-community/Qwen3-0.6B-4bit"


class DownloadDialog(QDialog):
    downloadChosen = Signal(str)  # the repository id, checked

    def __init__(
        self, models_dir: Path, endpoint: str | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("DownloadDialog")
        self.setWindowTitle("Download Model")
        self.setAccessibleName("Download model")
        self.models_dir = models_dir
        self.endpoint = endpoint  # None: huggingface.co, or HF_ENDPOINT when set
        self.checked_repo: str | None = None  # the id the shown check is about
        self._subject: str | None = None  # the id being checked, or checked
        self._request = 0  # a later check makes an earlier one's answer stale

        intro = plain_label(
            f"The Hugging Face id of an MLX model, e.g. {EXAMPLE}.\n"
            "Check shows what would be downloaded, and whether it fits, before anything is."
        )
        intro.setWordWrap(True)
        self.repo_edit = QLineEdit()
        self.repo_edit.setAccessibleName("Repository id")
        self.repo_edit.setPlaceholderText("owner/name")
        self.check_button = QPushButton("Check")
        self.check_button.setAccessibleName("Check")
        self.check_button.setToolTip("Ask Hugging Face for the files and their sizes")
        self.check_button.setDefault(True)  # Enter in the box checks; Download takes a click
        self.status = _note("Check result")
        self.files = QTableWidget(0, 2)
        self.files.setObjectName("DownloadFiles")
        self.files.setAccessibleName("Files to download")
        self.files.setHorizontalHeaderLabels(("File", "Size"))
        self.files.verticalHeader().hide()
        self.files.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.files.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.files.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        header = self.files.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.total = _note("Total size")
        font = self.total.font()
        font.setBold(True)
        self.total.setFont(font)
        self.model = _note("Model kind")
        self.memory = _note("Memory")
        self.disk = _note("Disk space")
        self.gated = _note("Gated")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setAccessibleName("Cancel")
        self.cancel_button.setAutoDefault(False)
        self.download_button = QPushButton("Download")
        self.download_button.setObjectName("PrimaryButton")
        self.download_button.setAccessibleName("Download")
        self.download_button.setAutoDefault(False)

        ask = QHBoxLayout()
        ask.addWidget(self.repo_edit, 1)
        ask.addWidget(self.check_button)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.download_button)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(ask)
        layout.addWidget(self.status)
        layout.addWidget(self.files, 1)
        for note in (self.total, self.model, self.memory, self.disk, self.gated):
            layout.addWidget(note)
        layout.addLayout(buttons)
        self.setMinimumWidth(em(self, 30))
        self.resize(em(self, 34), em(self, 24))

        self.check_button.clicked.connect(self.check)
        self.repo_edit.textEdited.connect(self._on_edited)
        self.cancel_button.clicked.connect(self.reject)
        self.download_button.clicked.connect(self._download)
        self._show(None)

    def repo_id(self) -> str:
        return self.repo_edit.text().strip()

    @Slot()
    def check(self) -> None:
        """Ask the hub about the id in the box, off the GUI thread."""
        repo_id = self.repo_id()
        if not repo_id:
            self._show(None, f"Type a repository id first, e.g. {EXAMPLE}.", "danger")
            return
        self._request += 1
        request, self._subject = self._request, repo_id
        self._show(None, f"Checking {repo_id}…")
        self.check_button.setEnabled(False)
        check_download(self, repo_id, self.models_dir, self.endpoint).on_success(
            lambda answer: self._on_checked(request, repo_id, answer)
        ).on_failure(lambda failure: self._on_check_failed(request, failure)).start()

    def _on_checked(self, request: int, repo_id: str, answer: DownloadCheck) -> None:
        if request != self._request:
            return  # a newer check is under way
        self.check_button.setEnabled(True)
        self.checked_repo = repo_id
        self._show(answer)

    def _on_check_failed(self, request: int, failure: Failure) -> None:
        if request != self._request:
            return
        self.check_button.setEnabled(True)
        self._show(None, failure.message, "danger")

    @Slot(str)
    def _on_edited(self, _text: str) -> None:
        if self._subject is not None and self.repo_id() != self._subject:
            # What is shown, or still being asked, is about another id.
            self._request += 1
            self._subject = self.checked_repo = None
            self.check_button.setEnabled(True)
            self._show(None)

    @Slot()
    def _download(self) -> None:
        if self.checked_repo is not None:
            self.downloadChosen.emit(self.checked_repo)
            self.accept()

    def _show(self, result: DownloadCheck | None, status: str = "", kind: str = "") -> None:
        """Show a check's result, or (None) only a status line with nothing to download."""
        _set_note(self.status, status, kind)
        self.files.setVisible(result is not None)
        for note in (self.total, self.model, self.memory, self.disk, self.gated):
            note.hide()
        self.download_button.setEnabled(result is not None and result.fit.fits_disk)
        if result is None:
            self.files.setRowCount(0)
            return
        listing, fit = result.listing, result.fit
        self.files.setRowCount(len(listing.files))
        for row, (name, size) in enumerate(listing.files.items()):
            # The repository's owner chose the names: items show text as it is.
            self.files.setItem(row, 0, QTableWidgetItem(name))
            size_item = QTableWidgetItem(format_bytes(size))
            size_item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.files.setItem(row, 1, size_item)
        count = len(listing.files)
        _set_note(self.total, f"{count} files, {format_bytes(listing.total_bytes)} in all")
        _set_note(self.model, _model_kind(listing))
        _set_note(self.memory, *_memory_note(fit))
        _set_note(self.disk, *_disk_note(fit, listing.total_bytes))
        if listing.gated:
            _set_note(
                self.gated,
                "This repository is gated: accept its terms on huggingface.co and log in with "
                "`hf auth login`, or the download is refused.",
                "warning",
            )


def _model_kind(listing: RepoListing) -> str:
    known = [name for name in (listing.architecture, listing.model_type) if name]
    if not known:
        return "Model: the hub does not say which kind; it is checked before the weights arrive."
    if len(known) == 2:
        return f"Model: {known[0]} ({known[1]})"
    return f"Model: {known[0]}"


def _memory_note(fit: DownloadFit) -> tuple[str, str]:
    weights, memory = format_bytes(fit.weights_bytes), format_bytes(fit.memory_bytes)
    if fit.memory is MemoryFit.FITS:
        return f"Fits in memory: {weights} of weights, {memory} of RAM.", ""
    if fit.memory is MemoryFit.TIGHT:
        share = round(100 * fit.weights_bytes / fit.memory_bytes)
        return (
            f"Tight fit: {weights} of weights is {share} % of the {memory} of RAM; close "
            "other apps before loading it.",
            "warning",
        )
    return (
        f"Too big for this machine: {weights} of weights and {memory} of RAM. It would "
        "download but could not be loaded here.",
        "danger",
    )


def _disk_note(fit: DownloadFit, total_bytes: int) -> tuple[str, str]:
    fetch, free = format_bytes(fit.fetch_bytes), format_bytes(fit.free_bytes)
    if not fit.fits_disk:
        return (
            f"Not enough disk space: {fetch} to download and only {free} free. Free some "
            "space, then check again.",
            "danger",
        )
    if fit.fetch_bytes < total_bytes:
        return f"Disk: {fetch} still to download (an earlier try is resumed), {free} free.", ""
    return f"Disk: {fetch} to download, {free} free.", ""


def _note(accessible_name: str) -> QLabel:
    label = plain_label()  # messages name repositories, files and errors: shown literally
    label.setObjectName("DownloadNote")
    label.setAccessibleName(accessible_name)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _set_note(label: QLabel, text: str, kind: str = "") -> None:
    label.setText(text)
    label.setProperty("kind", kind)
    label.style().unpolish(label)
    label.style().polish(label)
    label.setVisible(bool(text))
