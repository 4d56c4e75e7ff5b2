"""The queue of `KnowledgeFolders` as the Knowledge page drives it: Re-index reads again a file
that failed even when the rescan sees nothing changed, and a folder removed then added again
under the same name while another folder indexes is added, not dropped as a duplicate run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from app.knowledge.index import KnowledgeIndex
from app.knowledge.pause import PauseGate
from app.knowledge.records import SyncReport
from app.operations.knowledge_folders import KnowledgeFolders
from tests.app.knowledge.documents import write

TIMEOUT_MS = 10_000


def test_re_index_reads_again_a_failed_file_that_a_rescan_passes_over(
    qtbot: Any, tmp_path: Path
) -> None:
    broken = write(tmp_path / "docs" / "notes.txt", bytes(range(256)))
    stamp = broken.stat().st_mtime_ns
    folders = KnowledgeFolders(tmp_path / "knowledge.db", gate=PauseGate())
    synced: list[SyncReport] = []
    folders.synced.connect(synced.append)
    folders.add("docs", tmp_path / "docs")
    qtbot.waitUntil(lambda: len(synced) == 1, timeout=TIMEOUT_MS)
    assert [Path(path).name for path, _ in synced[0].failed] == ["notes.txt"]
    # Mended in place to the same size and time (as a copy that keeps times would).
    broken.write_bytes(b"glaciers " * 28 + b"ice.")
    os.utime(broken, ns=(stamp, stamp))

    folders.sync("docs")
    qtbot.waitUntil(lambda: len(synced) == 2, timeout=TIMEOUT_MS)
    assert synced[1].unchanged == 1 and synced[1].changed == 0, "the rescan trusts the times"
    folders.reindex("docs")
    qtbot.waitUntil(lambda: len(synced) == 3, timeout=TIMEOUT_MS)
    assert synced[2].changed == 1 and synced[2].failed == ()
    with KnowledgeIndex.open(tmp_path / "knowledge.db") as index:
        assert index.status("docs").files == 1 and index.status("docs").failed == ()
    folders.stop()


def test_a_folder_removed_and_added_again_while_another_indexes_is_added(
    qtbot: Any, tmp_path: Path
) -> None:
    gate = PauseGate()
    folders = KnowledgeFolders(tmp_path / "knowledge.db", gate=gate)
    for name in ("busy", "docs"):
        write(tmp_path / name / "a.md", f"# {name}\n\nSome text.")
    folders.add("docs", tmp_path / "docs")
    qtbot.waitUntil(lambda: folders.running is None, timeout=TIMEOUT_MS)
    gate.hold(1)  # a reply generates: "busy" waits at the gate, the rest waits for it
    folders.add("busy", tmp_path / "busy")
    folders.remove("docs")
    folders.add("docs", tmp_path / "docs")
    folders.sync("docs")  # the watcher: one more run for a folder already asked for is one
    assert folders.running == "busy" and folders.waiting == ("docs",)
    gate.release(1)
    qtbot.waitUntil(lambda: folders.running is None and not folders.waiting, timeout=TIMEOUT_MS)
    with KnowledgeIndex.open(tmp_path / "knowledge.db") as index:
        assert [c.name for c in index.collections()] == ["busy", "docs"]
        assert index.status("docs").files == 1
    folders.stop()
