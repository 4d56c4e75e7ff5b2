"""Knowledge folders through the app's operations: an index run reports its progress on the GUI
thread and announces what changed, waits while a reply generates (the gate held by the worker's
generation signals) and stops there when cancelled; `KnowledgeFolders` keeps folders current
(a new file is indexed a moment after it appears) and removes an index, never the files."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, Signal

from app.knowledge.index import KnowledgeIndex
from app.knowledge.pause import PauseGate
from app.knowledge.records import IndexProgress, SyncReport
from app.operations import knowledge_folders
from app.operations.changes import Changes, app_changes
from app.operations.knowledge import add_folder
from app.operations.knowledge_folders import KnowledgeFailure, KnowledgeFolders
from app.operations.knowledge_pause import pause_while_generating
from app.operations.operation import Failure, FailureKind
from tests.app.knowledge.documents import HashEmbedder, write

TIMEOUT_MS = 10_000


class _Ended:
    def __init__(self, request_id: int) -> None:
        self.request_id = request_id


class _FakeWorker(QObject):
    """The inference worker's generation signals, emitted by the test."""

    generationStarted = Signal(int)
    generationFinished = Signal(object)
    generationFailed = Signal(object)


def test_an_index_run_waits_while_a_reply_generates_and_reports_on_the_gui_thread(
    qtbot: Any, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    for n in range(4):
        write(folder / f"{n}.txt", f"Note {n} on volcanoes.")
    database = tmp_path / "knowledge.db"
    gate, worker = PauseGate(), _FakeWorker()
    pause_while_generating(gate, worker)
    announced: list[Changes] = []
    app_changes().subscribe(worker, announced.append)
    progress: list[IndexProgress] = []
    results: list[SyncReport] = []
    threads: set[str] = set()

    def seen(update: IndexProgress) -> None:
        threads.add(threading.current_thread().name)
        progress.append(update)

    worker.generationStarted.emit(7)  # a reply is generating when the folder is added
    operation = add_folder(worker, database, "docs", folder, embedder=HashEmbedder(), gate=gate)
    operation.on_progress(seen).on_success(results.append).start()
    qtbot.waitUntil(lambda: any(update.paused for update in progress), timeout=TIMEOUT_MS)
    assert not results and operation.running
    worker.generationFinished.emit(_Ended(7))
    qtbot.waitUntil(lambda: bool(results), timeout=TIMEOUT_MS)

    assert results[0].added == 4 and results[0].embedded == 4
    assert threads == {threading.main_thread().name}
    assert progress[-1].files_done == 4 and not progress[-1].paused
    assert Changes(knowledge=True) in announced
    with KnowledgeIndex.open(database) as index:
        assert index.status("docs").files == 4


def test_a_cancel_while_paused_stops_before_the_next_file(qtbot: Any, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    write(folder / "a.txt", "Alpha.")
    database = tmp_path / "knowledge.db"
    gate, worker = PauseGate(), _FakeWorker()
    pause_while_generating(gate, worker)
    failures: list[Failure] = []
    progress: list[IndexProgress] = []
    worker.generationStarted.emit(1)
    operation = add_folder(worker, database, "docs", folder, gate=gate)
    operation.on_progress(progress.append).on_failure(failures.append).start()
    qtbot.waitUntil(lambda: any(update.paused for update in progress), timeout=TIMEOUT_MS)
    operation.cancel()
    qtbot.waitUntil(lambda: bool(failures), timeout=TIMEOUT_MS)
    assert failures[0].kind is FailureKind.CANCELLED
    worker.generationFailed.emit(_Ended(1))
    assert not gate.paused
    with KnowledgeIndex.open(database) as index:
        assert index.documents("docs") == [], "nothing read while the reply generated"


def test_folders_are_kept_current_and_removed_without_their_files(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(knowledge_folders, "DEBOUNCE_MS", 50)
    folder = tmp_path / "docs"
    write(folder / "sub" / "a.txt", "Apricots.")
    folders = KnowledgeFolders(tmp_path / "knowledge.db", gate=PauseGate())
    synced: list[SyncReport] = []
    removed: list[str] = []
    failed: list[KnowledgeFailure] = []
    folders.synced.connect(synced.append)
    folders.removed.connect(removed.append)
    folders.failed.connect(failed.append)
    listed: list[list[str]] = []
    monkeypatch.setattr(folders, "_sync_each", listed.append)
    folders.sync_all()  # at start, before any folder was added: nothing to index, nothing made
    qtbot.waitUntil(lambda: listed == [[]], timeout=TIMEOUT_MS)
    assert not (tmp_path / "knowledge.db").exists()

    folders.add("docs", folder)
    folders.sync("docs")  # asked while the addition runs: waits for it
    qtbot.waitUntil(lambda: len(synced) == 2, timeout=TIMEOUT_MS)
    assert synced[0].added == 1 and synced[1].unchanged == 1
    write(folder / "sub" / "b.txt", "Blackberries.")
    qtbot.waitUntil(lambda: len(synced) == 3, timeout=TIMEOUT_MS)
    assert synced[2].added == 1, "the watcher saw the new file"

    folders.remove("docs")
    qtbot.waitUntil(lambda: removed == ["docs"], timeout=TIMEOUT_MS)
    assert (folder / "sub" / "a.txt").exists() and (folder / "sub" / "b.txt").exists()
    with KnowledgeIndex.open(tmp_path / "knowledge.db") as index:
        assert index.collections() == []
    assert failed == []
    folders.stop()
