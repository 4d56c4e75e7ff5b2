"""Files read in a child process: a file that stops the reader (here: one read for longer than
allowed, as a hang would be) is recorded as failed with the reason, and a new child reads the
rest, passing that file by until it changes."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from app.knowledge import reader_process
from app.knowledge.index import KnowledgeIndex
from app.knowledge.pause import PauseGate
from app.knowledge.reader_process import read_in_child
from app.knowledge.records import DocumentState, IndexProgress
from tests.app.knowledge.documents import write


def test_a_file_that_stops_the_reader_is_recorded_and_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    # Long enough that its reading outlasts the parent's look at the clock (every 50 ms).
    write(folder / "hangs.txt", "A file the reader takes a while to finish.\n\n" * 50_000)
    database = tmp_path / "knowledge.db"
    with KnowledgeIndex.open(database) as index:
        index.add("docs", folder)
    monkeypatch.setattr(reader_process, "_FILE_BASE_S", 0.0)  # every file overstays
    monkeypatch.setattr(reader_process, "_FILE_PER_MB_S", 0.0)
    progress: list[IndexProgress] = []
    report = read_in_child(
        database, "docs", cancel=threading.Event(), gate=PauseGate(), progress=progress.append
    )
    [(path, reason)] = report.failed
    assert path == str(folder / "hangs.txt") and "took longer than 0 seconds" in reason
    with KnowledgeIndex.open(database) as index:
        [document] = index.documents("docs")
        assert document.state is DocumentState.FAILED and document.failure == reason
    assert progress, "the children's progress reached the parent"
