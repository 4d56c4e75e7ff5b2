"""An index run's reading in a child process, so the window never waits for it.

Reading and chunking is Python work: on a thread of the app it would take the GIL from the GUI
thread for up to the interpreter's switch interval at a time, again and again, for as long as
a folder takes (measured in `bench/knowledge_gui.py`). In a child process (multiprocessing's
"spawn", which is safe in a process with threads and works in the frozen app) it shares nothing
with the window but the CPU. It also keeps a file that crashes a reader or fills the memory from
costing more than that file: the child dies, the file it was reading is recorded as failed with
what happened, and a new child goes on with the rest (each file is its own transaction, so a
killed child leaves the index whole). A file read for longer than its size can explain is
taken for a hang and treated the same way.

The parent mirrors the pause gate into a `multiprocessing` event the child waits at between
files, relays the child's progress and returns its report. A cancel kills the child at once:
the file it was reading is rolled back (SQLite's transaction), every file before it stays.
Vectors are not made in the child: an embedding model runs in the app (MLX only on the
inference worker), so the caller embeds afterwards (`KnowledgeIndex.embed`).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from multiprocessing.connection import Connection, wait
from multiprocessing.synchronize import Event
from pathlib import Path

from app.knowledge.embedder import Embedder
from app.knowledge.index import KnowledgeIndex
from app.knowledge.pause import CancelFlag, Gate
from app.knowledge.records import (
    CollectionState,
    IndexProgress,
    KnowledgeError,
    SyncCancelled,
    SyncReport,
)

_POLL_S = 0.05
# A file may take this long, plus the time per megabyte below, before it is taken for a hang.
_FILE_BASE_S = 120.0
_FILE_PER_MB_S = 2.0
# After this many files that stopped a child in one run, the run gives up (something else is
# wrong: the disk, the memory).
MAX_LOST_CHILDREN = 5


class _ChildGate:
    """The pause gate as the child sees it: `paused` while the parent's gate is held."""

    def __init__(self, held: Event) -> None:
        self._held = held

    @property
    def paused(self) -> bool:
        return self._held.is_set()

    def wait(self, cancel: CancelFlag) -> float:
        started = time.monotonic()
        while self._held.is_set() and not cancel.is_set():
            time.sleep(_POLL_S)
        return time.monotonic() - started


def index_folder_run(
    database: Path,
    name: str,
    *,
    embedder: Embedder | None,
    cancel: threading.Event,
    gate: Gate,
    progress: Callable[[IndexProgress], None],
) -> SyncReport:
    """A whole index run of folder `name`: its files read in a child process, then the vectors
    made here with `embedder` (if any). What `KnowledgeIndex.sync` returns and raises."""
    read: list[IndexProgress] = []

    def reading(update: IndexProgress) -> None:
        read[:] = [update]
        progress(update)

    report = read_in_child(database, name, cancel=cancel, gate=gate, progress=reading)
    if embedder is None or report.state is not CollectionState.READY:
        return report

    def embedding(update: IndexProgress) -> None:
        if read:  # what the reading did stays in view while the vectors are made
            last = read[0]
            update = replace(
                update,
                files_done=last.files_done,
                files_total=last.files_total,
                chunks=last.chunks,
                failures=last.failures,
            )
        progress(update)

    with KnowledgeIndex.open(database) as index:
        embedded = index.embed(name, embedder, cancel=cancel, gate=gate, progress=embedding)
    return replace(report, embedded=embedded)


def read_in_child(
    database: Path,
    name: str,
    *,
    cancel: threading.Event,
    gate: Gate,
    progress: Callable[[IndexProgress], None],
) -> SyncReport:
    """Index folder `name` (its files; no vectors) in a child process; what `sync` returns and
    raises. A file that stops the child is recorded as failed and the run goes on without it."""
    lost: list[tuple[str, str]] = []
    while True:
        outcome = _one_child(database, name, cancel, gate, progress)
        if isinstance(outcome, SyncReport):
            return _with_lost(outcome, lost)
        path, reason = outcome
        lost.append((path, reason))
        if len(lost) >= MAX_LOST_CHILDREN:
            raise KnowledgeError(f"Indexing {name} stopped: {reason}")
        with KnowledgeIndex.open(database) as index:
            index.mark_failed(name, path, reason)  # the next child passes it by


def _one_child(
    database: Path,
    name: str,
    cancel: threading.Event,
    gate: Gate,
    progress: Callable[[IndexProgress], None],
) -> SyncReport | tuple[str, str]:
    """Run one child to its end: its report, or (the file it was reading, why it stopped)."""
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    held = context.Event()
    child = context.Process(
        target=_child_main,
        args=(sender, str(database), name, held),
        name=f"Branchwise indexing {name}",
        daemon=True,
    )
    child.start()
    sender.close()  # the child holds the other end: end of input means the child is gone
    reading: tuple[str, int, float] | None = None  # path, size, started
    try:
        while True:
            if cancel.is_set():  # a killed child's file is rolled back: the rest stays
                raise SyncCancelled("Indexing was cancelled; the files read so far stay indexed.")
            if gate.paused:
                held.set()
                if reading is not None:  # waiting is not reading: the clock starts again
                    reading = (reading[0], reading[1], time.monotonic())
            else:
                held.clear()
            if not receiver.poll(_POLL_S):
                if reading is not None and time.monotonic() - reading[2] > _allowed_s(reading[1]):
                    return reading[0], (
                        f"Reading it took longer than {_allowed_s(reading[1]):.0f} seconds and "
                        "was stopped (a damaged file?)."
                    )
                continue
            try:
                kind, *values = receiver.recv()
            except EOFError:
                child.join()
                if reading is None:
                    raise KnowledgeError(_death(name, child.exitcode)) from None
                return reading[0], f"Reading it stopped the reader: {_cause(child.exitcode)}."
            if kind == "reading":  # ("", 0) once the files are read
                reading = (values[0], values[1], time.monotonic()) if values[0] else None
            elif kind == "progress":
                progress(values[0])
            elif kind == "done":
                return values[0]
            else:
                raise KnowledgeError(values[0])
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        child.close()
        receiver.close()


def _allowed_s(size: int) -> float:
    return _FILE_BASE_S + _FILE_PER_MB_S * size / 1e6


def _cause(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return (
            "stopped by the system (out of memory?)" if name == "SIGKILL" else f"a crash ({name})"
        )
    return f"an unexpected exit (code {exitcode})"


def _death(name: str, exitcode: int | None) -> str:
    return f"Indexing {name} stopped: {_cause(exitcode)}. What was indexed before is kept."


def _with_lost(report: SyncReport, lost: list[tuple[str, str]]) -> SyncReport:
    return replace(report, failed=(*lost, *report.failed)) if lost else report


def _child_main(sender: Connection, database: str, name: str, held: Event) -> None:
    """The child's whole life: index the folder, send back the report or why it stopped."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with, args=(parent.sentinel,), daemon=True).start()
    try:
        with KnowledgeIndex.open(Path(database)) as index:
            report = index.sync(
                name,
                gate=_ChildGate(held),
                progress=lambda update: sender.send(("progress", update)),
                reading=lambda path, size: sender.send(("reading", path, size)),
            )
        sender.send(("done", report))
    except KnowledgeError as error:
        sender.send(("failed", str(error)))
    except BaseException as error:  # the child's one duty is to say why it stopped
        sender.send(("failed", f"Indexing {name} stopped on an unexpected error: {error!r}."))
    finally:
        sender.close()


def _exit_with(parent_sentinel: int) -> None:
    """End the child with the app: an index run outliving it would hold the index's file."""
    wait([parent_sentinel])
    os._exit(1)
