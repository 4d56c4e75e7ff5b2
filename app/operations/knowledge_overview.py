"""Every knowledge folder as the index holds it (files, chunks, failures, embedding model,
state) and whether its folder is there now, read off the GUI thread: counting a large folder's
chunks, or looking at a folder on a network share that went away, takes longer than a frame.

`OverviewReader` reads on request, one read at a time: a request made while one runs asks for
one more read after it, so a view that asks at every change is never shown stale figures and
never queues a read per change.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.knowledge.index import KnowledgeIndex
from app.knowledge.records import CollectionStatus, KnowledgeError
from app.operations.operation import Failure, JobContext, Operation


@dataclass(frozen=True, slots=True)
class FolderOverview:
    status: CollectionStatus
    online: bool  # its folder (or file) is there now


@dataclass(frozen=True, slots=True)
class KnowledgeOverview:
    folders: tuple[FolderOverview, ...]  # by name

    def names(self) -> list[str]:
        return [folder.status.collection.name for folder in self.folders]

    def find(self, name: str) -> FolderOverview | None:
        return next((f for f in self.folders if f.status.collection.name == name), None)


def read_overview(database: Path) -> KnowledgeOverview:
    with KnowledgeIndex.open(database) as index:
        statuses = [index.status(found.name) for found in index.collections()]
    return KnowledgeOverview(
        tuple(FolderOverview(status, Path(status.collection.root).exists()) for status in statuses)
    )


class OverviewReader(QObject):
    """Create on the GUI thread; `read()` whenever what is shown may have changed."""

    ready = Signal(KnowledgeOverview)
    failed = Signal(str)  # why the index could not be read, for the person

    def __init__(self, database: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._database = database
        self._reading = False
        self._again = False

    @property
    def reading(self) -> bool:
        return self._reading

    def read(self) -> None:
        if self._reading:
            self._again = True
            return
        self._reading, self._again = True, False
        database = self._database

        def job(_context: JobContext[None]) -> KnowledgeOverview:
            return read_overview(database)

        operation = Operation(
            self, "Reading the knowledge folders", job, expected=(KnowledgeError,)
        )
        operation.on_success(self._read).on_failure(self._not_read).start()

    def _read(self, overview: KnowledgeOverview) -> None:
        self._ended()
        self.ready.emit(overview)

    def _not_read(self, failure: Failure) -> None:
        self._ended()
        self.failed.emit(failure.message)

    def _ended(self) -> None:
        self._reading = False
        if self._again:
            self.read()
