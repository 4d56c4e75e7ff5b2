"""What the knowledge folders are doing, remembered for the views that show it (the Knowledge
page): the run under way and how far it is, the folders waiting their turn, the ones whose
indexing the person cancelled, and how each folder's last run ended (indexed, cancelled, or
failed and why, with what it passed over) for as long as the app runs.

It listens to the app's `KnowledgeFolders` from start-up, so a page opened later (or opened
again) shows a run begun before it, and how the last one ended. Folders are added through it
(`add`): one added while another indexes is not in the index until its turn comes, and is
listed meanwhile from `adding`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.knowledge.records import IndexProgress, SyncReport
from app.operations.knowledge_folders import KnowledgeFailure, KnowledgeFolders


class RunEnd(StrEnum):
    INDEXED = "indexed"
    CANCELLED = "cancelled"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class LastRun:
    end: RunEnd
    message: str  # why it failed or stopped; "" when it indexed
    report: SyncReport | None  # what an ended run did (its failures, what it passed over)


@dataclass(frozen=True, slots=True)
class FolderActivity:
    running: bool  # a run (an addition, an index run, a removal) is under way
    removing: bool  # its removal is asked for or under way
    waiting: bool  # a run is asked for and waits for another folder's
    held: bool  # the person cancelled: no automatic runs until they ask again
    progress: IndexProgress | None  # of the run under way
    last: LastRun | None  # how the last run ended, this session


class KnowledgeActivity(QObject):
    """Create on the GUI thread beside the app's `KnowledgeFolders`."""

    changed = Signal(str)  # the name of a folder whose activity changed; "" for every folder
    # A run ended in a failure the person should read (not a cancel): its folder and message.
    runFailed = Signal(KnowledgeFailure)

    def __init__(self, folders: KnowledgeFolders, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.folders = folders
        self._progress: dict[str, IndexProgress] = {}
        self._last: dict[str, LastRun] = {}
        self._adding: dict[str, Path] = {}
        self._removing: set[str] = set()
        folders.progressed.connect(self._on_progress)
        folders.synced.connect(self._on_synced)
        folders.failed.connect(self._on_failed)
        folders.removed.connect(self._on_removed)
        folders.queueChanged.connect(self._on_queue)

    def add(self, name: str, root: Path, follow_links: bool = False) -> None:
        """Add the knowledge folder `name` over `root` and index it (after the runs asked
        for before)."""
        self._adding[name] = root
        self._last.pop(name, None)
        self.folders.add(name, root, follow_links)
        self.changed.emit(name)

    def remove(self, name: str) -> None:
        """Remove the knowledge folder `name`'s index (its files stay), cancelling its runs."""
        self._removing.add(name)
        self._adding.pop(name, None)
        self.folders.remove(name)
        self.changed.emit(name)

    @property
    def adding(self) -> dict[str, Path]:
        """The folders being added (name -> folder), until their first run ends."""
        return dict(self._adding)

    def of(self, name: str) -> FolderActivity:
        running = self.folders.running == name
        return FolderActivity(
            running,
            name in self._removing,
            name in self.folders.waiting,
            self.folders.held(name),
            self._progress.get(name) if running else None,
            self._last.get(name),
        )

    def _on_queue(self) -> None:
        # An addition cancelled before its turn never runs, so never ends; a removal that
        # failed is no longer under way.
        asked = {*self.folders.waiting, *filter(None, [self.folders.running])}
        for name in [name for name in self._adding if name not in asked]:
            del self._adding[name]
        self._removing &= asked
        self.changed.emit("")

    def _on_progress(self, progress: IndexProgress) -> None:
        self._progress[progress.collection] = progress
        self.changed.emit(progress.collection)

    def _on_synced(self, report: SyncReport) -> None:
        self._progress.pop(report.collection, None)
        self._adding.pop(report.collection, None)
        self._last[report.collection] = LastRun(RunEnd.INDEXED, "", report)
        self.changed.emit(report.collection)

    def _on_failed(self, failure: KnowledgeFailure) -> None:
        name = failure.collection
        self._progress.pop(name, None)
        self._adding.pop(name, None)
        end = RunEnd.CANCELLED if failure.cancelled else RunEnd.FAILED
        if name:
            self._last[name] = LastRun(end, failure.message, None)
        if end is RunEnd.FAILED:
            self.runFailed.emit(failure)
        self.changed.emit(name)

    def _on_removed(self, name: str) -> None:
        self._progress.pop(name, None)
        self._adding.pop(name, None)
        self._removing.discard(name)
        self._last.pop(name, None)
        self.changed.emit(name)
