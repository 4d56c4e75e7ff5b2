"""Keeps every knowledge folder's index current while the app runs: each is indexed at start,
again a moment after its files change (a `QFileSystemWatcher` on its folders, the shallowest
MAX_WATCHED of each), and every few minutes for what a watcher misses (a file edited in place,
folders deeper than those watched, a disk plugged back in).

One index run at a time, in the order asked (a folder asked for twice waits once); adding and
removing go through the same queue, so two runs never write at once. Each run waits at the pause
gate while a reply generates (`app.operations.knowledge`).

A folder whose indexing the person cancels is left alone by the watcher and the rescans until
they ask again (`reindex`) or the app starts anew: a cancel that the next rescan undid would
not be one. The folders are listed for a rescan off the GUI thread, like every run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from app.knowledge.pause import PauseGate
from app.knowledge.records import IndexProgress, KnowledgeError, SyncReport
from app.operations.operation import Failure, FailureKind, JobContext, Operation

if TYPE_CHECKING:
    from app.knowledge.embedder import Embedder

RESCAN_S = 300.0
# Files arrive in bursts (a copy, a checkout): one run a moment after the last change.
DEBOUNCE_MS = 2000
_REFUSALS = (KnowledgeError,)


@dataclass(frozen=True, slots=True)
class KnowledgeFailure:
    """An index run, an addition or a removal that did not end well."""

    collection: str
    message: str
    cancelled: bool


def _folder_names(database: Path) -> Callable[[JobContext[None]], list[str]]:
    def job(_context: JobContext[None]) -> list[str]:
        from app.knowledge.index import KnowledgeIndex

        if not database.exists():  # no folder ever added: no index to make at every start
            return []
        with KnowledgeIndex.open(database) as index:
            return [collection.name for collection in index.collections()]

    return job


class _Kind(Enum):
    SYNC = "sync"  # what changed, asked by the watcher, a rescan or the person
    ADD = "add"
    REMOVE = "remove"


@dataclass(frozen=True, slots=True)
class _Pending:
    name: str
    kind: _Kind
    start: Callable[[], Operation]


class KnowledgeFolders(QObject):
    """Create on the GUI thread with the index's file (`AppPaths.knowledge_database`);
    `embedder()` gives the embedder each run uses (None: BM25 alone), asked on the run's
    thread."""

    progressed = Signal(IndexProgress)
    synced = Signal(SyncReport)
    removed = Signal(str)
    failed = Signal(KnowledgeFailure)
    # The folders waiting or running changed (a run asked for, started or ended).
    queueChanged = Signal()

    def __init__(
        self,
        database: Path,
        embedder: Callable[[], Embedder | None] = lambda: None,
        gate: PauseGate | None = None,
        rescan_s: float = RESCAN_S,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.database = database
        self._embedder = embedder
        self._gate = gate
        self._queue: list[_Pending] = []
        self._running: tuple[str, Operation] | None = None
        self._held: set[str] = set()  # cancelled by the person: no automatic runs
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(self._folder_changed)
        self._watched: dict[str, frozenset[str]] = {}  # by folder name
        self._soon: dict[str, QTimer] = {}
        self._rescan = QTimer(self)
        self._rescan.setInterval(int(rescan_s * 1000))
        self._rescan.timeout.connect(self.sync_all)

    def start(self) -> None:
        """Index every folder now, and again every few minutes."""
        self.sync_all()
        self._rescan.start()

    def stop(self) -> None:
        """No more runs; the one under way is cancelled (what it finished stays)."""
        self._rescan.stop()
        for timer in self._soon.values():
            timer.stop()
        self._queue.clear()
        if self._running is not None:
            self._running[1].cancel()

    @property
    def running(self) -> str | None:
        """The name of the folder being indexed, added or removed now."""
        return None if self._running is None else self._running[0]

    @property
    def waiting(self) -> tuple[str, ...]:
        """The names of the folders whose runs wait for the one under way, in order."""
        return tuple(dict.fromkeys(pending.name for pending in self._queue))

    def held(self, name: str) -> bool:
        """Whether the person cancelled folder `name`'s indexing (until `reindex`)."""
        return name in self._held

    def sync_all(self) -> None:
        """Index what changed in every folder (listed off the GUI thread)."""
        listing = Operation(
            self, "Listing knowledge folders", _folder_names(self.database), expected=_REFUSALS
        )
        listing.on_success(self._sync_each)
        listing.on_failure(
            lambda failure: self.failed.emit(KnowledgeFailure("", failure.message, False))
        )
        listing.start()

    def _sync_each(self, names: list[str]) -> None:
        for name in names:
            self.sync(name)

    def sync(self, name: str) -> None:
        """Index what changed in folder `name`, after the runs already asked for; nothing for a
        folder whose indexing the person cancelled."""
        if name not in self._held:
            self._ask(_Pending(name, _Kind.SYNC, lambda: self._index(name, retry=False)))

    def reindex(self, name: str) -> None:
        """The person asks: index folder `name` again, reading what changed and every file
        that failed before (a cancelled run goes on from where it stopped)."""
        self._held.discard(name)
        self._queue = [p for p in self._queue if not (p.name == name and p.kind is _Kind.SYNC)]
        self._ask(_Pending(name, _Kind.SYNC, lambda: self._index(name, retry=True)))

    def add(self, name: str, root: Path, follow_links: bool = False) -> None:
        self._held.discard(name)
        self._ask(_Pending(name, _Kind.ADD, lambda: self._addition(name, root, follow_links)))

    def remove(self, name: str) -> None:
        """Remove folder `name`'s index (never its files): runs asked for it are dropped, one
        under way is cancelled, and the removal goes first."""
        self._held.discard(name)
        self._queue = [pending for pending in self._queue if pending.name != name]
        if self._running is not None and self._running[0] == name:
            self._running[1].cancel()
        self._unwatch(name)
        removal = _Pending(name, _Kind.REMOVE, lambda: self._removal(name))
        self._queue.insert(0, removal)
        self._next()

    def cancel(self, name: str) -> None:
        """Stop indexing folder `name` (now, or before it starts); the watcher and the rescans
        leave it alone until `reindex`."""
        self._held.add(name)
        self._queue = [pending for pending in self._queue if pending.name != name]
        if self._running is not None and self._running[0] == name:
            self._running[1].cancel()
        self.queueChanged.emit()

    # The runs' module (the index, numpy) is imported when the first run starts, not with the
    # window: the app's folders are made before it shows.

    def _addition(self, name: str, root: Path, follow_links: bool) -> Operation:
        from app.operations.knowledge import add_folder

        return add_folder(
            self,
            self.database,
            name,
            root,
            follow_links=follow_links,
            embedder_from=self._embedder,
            gate=self._gate,
        )

    def _removal(self, name: str) -> Operation:
        from app.operations.knowledge import remove_folder

        return remove_folder(self, self.database, name)

    def _index(self, name: str, retry: bool) -> Operation:
        from app.operations.knowledge import index_folder

        return index_folder(
            self,
            self.database,
            name,
            embedder_from=self._embedder,
            gate=self._gate,
            retry_failed=retry,
        )

    def _ask(self, pending: _Pending) -> None:
        # A second sync waits as one; an addition or a removal is never dropped for it.
        if pending.kind is not _Kind.SYNC or not any(p.name == pending.name for p in self._queue):
            self._queue.append(pending)
        self._next()
        self.queueChanged.emit()

    def _next(self) -> None:
        if self._running is not None or not self._queue:
            return
        pending = self._queue.pop(0)
        operation = pending.start()
        self._running = (pending.name, operation)
        operation.on_progress(self._progressed)
        operation.on_success(lambda result: self._succeeded(pending.name, result))
        operation.on_failure(lambda failure: self._failed(pending.name, failure))
        operation.start()

    def _progressed(self, progress: IndexProgress) -> None:
        self.progressed.emit(progress)

    def _succeeded(self, name: str, result: object) -> None:
        self._running = None
        if isinstance(result, SyncReport):
            self._watch(name, result.folders)
            self.synced.emit(result)
        else:
            self.removed.emit(name)
        self._next()
        self.queueChanged.emit()

    def _failed(self, name: str, failure: Failure) -> None:
        self._running = None
        self.failed.emit(
            KnowledgeFailure(name, failure.message, failure.kind is FailureKind.CANCELLED)
        )
        self._next()
        self.queueChanged.emit()

    def _watch(self, name: str, folders: tuple[str, ...]) -> None:
        self._unwatch(name)
        self._watched[name] = frozenset(folders)
        if folders:
            self._watcher.addPaths(list(folders))

    def _unwatch(self, name: str) -> None:
        gone = self._watched.pop(name, frozenset())
        still = frozenset().union(*self._watched.values())
        if gone - still:
            self._watcher.removePaths(sorted(gone - still))

    def _folder_changed(self, folder: str) -> None:
        for name, folders in self._watched.items():
            if folder in folders:
                self._sync_soon(name)

    def _sync_soon(self, name: str) -> None:
        timer = self._soon.get(name)
        if timer is None:
            timer = self._soon[name] = QTimer(self)
            timer.setSingleShot(True)
            timer.setInterval(DEBOUNCE_MS)
            timer.timeout.connect(lambda: self.sync(name))
        timer.start()
