"""Big exports stream: one conversation in memory at a time. The 500 MB case imports with
memory growing by less than 300 MB; a small one checks the same path quickly. The import's
speed is bench/importers.py's (messages per second over `json.load` of the same file)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psutil

from app.importers import run
from app.store.conversations import Store
from tests.app.importers.big_export import MESSAGES_PER_CONVERSATION, write_big_export


class _PeakMemory:
    """Samples this process's resident memory on a thread while the import runs."""

    def __init__(self) -> None:
        self._process = psutil.Process()
        self.start = self._process.memory_info().rss
        self.peak = self.start
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self._process.memory_info().rss)

    def __enter__(self) -> _PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def growth_mb(self) -> float:
        return (self.peak - self.start) / 1024**2


def _import_big(tmp_path: Path, size: int) -> tuple[int, run.ImportReport, float, float]:
    path = tmp_path / "conversations.json"
    count = write_big_export(path, size)
    seen = 0

    def progress(_outcome: object) -> None:
        nonlocal seen
        seen += 1

    with Store.open(tmp_path / "data" / "conversations.sqlite3") as store, _PeakMemory() as peak:
        started = time.perf_counter()
        report = run.import_paths([path], store, progress=progress)
        elapsed = time.perf_counter() - started
        assert seen == count
        assert len(store.list_conversations()) == count
    path.unlink()  # pytest keeps recent temporary folders; not this file
    return count, report, peak.growth_mb, elapsed


def _check(count: int, report: run.ImportReport) -> None:
    counts = report.counts
    assert counts.imported == count and counts.refused == 0
    assert counts.new_messages == count * MESSAGES_PER_CONVERSATION


def test_a_few_megabytes_stream_through(tmp_path: Path) -> None:
    count, report, growth, _ = _import_big(tmp_path, 4 * 1024**2)
    _check(count, report)
    assert growth < 100


# Not `perf`: it checks memory, which other processes on the machine do not change, so it runs
# beside the other tests instead of alone in the timed step (where it was 57 of its 72 s).
def test_a_500_mb_export_imports_with_memory_growing_less_than_300_mb(tmp_path: Path) -> None:
    count, report, growth, elapsed = _import_big(tmp_path, 500 * 1024**2)
    _check(count, report)
    print(f"500 MB: {count} conversations in {elapsed:.1f} s, memory +{growth:.0f} MB")
    assert growth < 300
