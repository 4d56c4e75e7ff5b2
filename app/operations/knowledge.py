"""Knowledge folders as operations: adding a folder and indexing it, indexing what changed,
removing a folder's index (never its files); and the gate that holds every index run while a
reply is generating (`app.knowledge.pause`, held by `knowledge_pause`).

An index run reads the files in a child process (`app.knowledge.reader_process`: the window
never waits for the GIL, and a file that crashes a reader costs that file only), then computes
the vectors on the operation's thread with the `Embedder` given (one whose model must run on the
inference worker hands its batches over there itself: `app.knowledge.embedder`). It reports
`IndexProgress` (files, chunks, failures, time left; whether it waits for a reply), waits at the
pause gate before each file and each batch of vectors, and stops at once when cancelled (every
file finished stays indexed, and the next run goes on from there).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject

from app.knowledge.embedder import Embedder
from app.knowledge.index import KnowledgeIndex
from app.knowledge.pause import PauseGate, app_pause_gate
from app.knowledge.reader_process import index_folder_run
from app.knowledge.records import IndexProgress, KnowledgeError, SyncReport
from app.operations.changes import Changes
from app.operations.operation import JobContext, Operation

_KNOWLEDGE_CHANGED = Changes(knowledge=True)

IndexRun = Operation[SyncReport, IndexProgress]


def _index(
    owner: QObject,
    database: Path,
    name: str,
    description: str,
    prepare: Callable[[KnowledgeIndex], object],
    embedder: Callable[[], Embedder | None],
    gate: PauseGate | None,
) -> IndexRun:
    def job(context: JobContext[IndexProgress]) -> SyncReport:
        waits_at = gate or app_pause_gate()
        with KnowledgeIndex.open(database) as index:
            prepare(index)
        return index_folder_run(
            database,
            name,
            embedder=embedder(),
            cancel=context.cancel_event,
            gate=waits_at,
            progress=context.report,
        )

    return Operation(
        owner,
        description,
        job,
        expected=(KnowledgeError,),
        changes=lambda _report: _KNOWLEDGE_CHANGED,
    )


def add_folder(
    owner: QObject,
    database: Path,
    name: str,
    root: Path,
    *,
    follow_links: bool = False,
    embedder: Embedder | None = None,
    embedder_from: Callable[[], Embedder | None] | None = None,
    gate: PauseGate | None = None,
) -> IndexRun:
    """Add the knowledge folder `name` over `root` (a folder or one file) and index it, with
    `embedder`, or the one `embedder_from()` gives on the run's thread (making an embedder
    loads a model's files, which the GUI thread, where runs start, must not wait for)."""
    return _index(
        owner,
        database,
        name,
        f"Adding {name}",
        lambda index: index.add(name, root, follow_links),
        embedder_from or (lambda: embedder),
        gate,
    )


def index_folder(
    owner: QObject,
    database: Path,
    name: str,
    *,
    embedder: Embedder | None = None,
    embedder_from: Callable[[], Embedder | None] | None = None,
    gate: PauseGate | None = None,
    retry_failed: bool = False,
) -> IndexRun:
    """Index what is new or changed in the knowledge folder `name` (embedders as `add_folder`
    takes them); with `retry_failed`, read again the files that could not be read last time
    although they have not changed (a file whose permissions were fixed, a share that was
    slow)."""

    def prepare(index: KnowledgeIndex) -> None:
        if retry_failed:
            index.retry_failures(name)

    source = embedder_from or (lambda: embedder)
    return _index(owner, database, name, f"Indexing {name}", prepare, source, gate)


def remove_folder(owner: QObject, database: Path, name: str) -> Operation[None, None]:
    """Remove the knowledge folder `name` and its index (its files are never touched)."""

    def job(_context: JobContext[None]) -> None:
        with KnowledgeIndex.open(database) as index:
            index.remove(name)

    return Operation(
        owner,
        f"Removing {name}",
        job,
        expected=(KnowledgeError,),
        changes=lambda _none: _KNOWLEDGE_CHANGED,
    )
