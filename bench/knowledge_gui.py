"""The GUI thread while a large folder is indexed (issue 43 item 1: a 10,000-file folder indexes
without the window stalling, gaps of at most 16 ms): the worst gap between the ticks of a 5 ms
timer on the event loop, idle and then while the index run goes on through the app's own
operation (progress delivered to the GUI thread as the window would get it), in one process.

    .venv/bin/python bench/knowledge_gui.py [--files N]

The folder is N Markdown files of 1-2 kB, cut from CPython's `pydoc_data` topics. The idle
probe's worst gap is the baseline: what the machine does to any event loop (another program,
the collector); the ratio, indexing over idle, is what the index run adds. Beside them, the same
probe while a thread spins in pure Python: what any Python thread costs the GUI thread through
the GIL (a waiting thread gets it within the 5 ms switch interval, plus the machine's
scheduling), the floor for work done on a thread rather than in another process.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QEventLoop, QObject, QTimer

from app.gui_thread_gc import collect_on_gui_thread
from app.knowledge.builtin_embedder import load_builtin_embedder
from app.knowledge.records import IndexProgress, SyncReport
from app.operations.knowledge import add_folder
from app.operations.operation import Failure
from bench.cli import description, positive_int
from bench.knowledge_corpus import topic_texts
from bench.table import table

STALL_MS = 16.0
PROBE_MS = 5


def write_folder(folder: Path, files: int) -> int:
    """`files` Markdown files of about 1.5 kB, in folders of 100; their total bytes."""
    text = "\n\n".join(body for _, body in topic_texts())
    written = 0
    for number in range(files):
        start = (number * 1511) % (len(text) - 2000)
        data = f"# Note {number}\n\n{text[start : start + 1000 + number % 1000]}\n"
        path = folder / f"part-{number // 100:03d}" / f"note-{number:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(data, encoding="utf-8")
        written += len(data)
    return written


class Probe:
    """Gaps between the ticks of a 5 ms timer, in milliseconds."""

    def __init__(self) -> None:
        self.gaps: list[float] = []
        self._clock = QElapsedTimer()
        self._timer = QTimer()
        self._timer.setInterval(PROBE_MS)
        self._timer.timeout.connect(self._tick)

    def start(self) -> None:
        self.gaps = []
        self._clock.start()
        self._last = 0
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def _tick(self) -> None:
        now = self._clock.nsecsElapsed()
        self.gaps.append((now - self._last) / 1e6)
        self._last = now


def _probed(probe: Probe, loop: QEventLoop, seconds: float) -> list[float]:
    probe.start()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()
    probe.stop()
    return list(probe.gaps)


def _spinning(probe: Probe, loop: QEventLoop, seconds: float) -> list[float]:
    stop = threading.Event()

    def spin() -> None:
        total = 0
        while not stop.is_set():
            for number in range(1000):
                total += number

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        return _probed(probe, loop, seconds)
    finally:
        stop.set()
        thread.join()


def _gap_row(name: str, gaps: list[float]) -> tuple[str, ...]:
    ordered = sorted(gaps)
    return (
        name,
        f"{ordered[-1]:.1f}",
        f"{ordered[int(0.99 * (len(ordered) - 1))]:.1f}",
        f"{sum(1 for gap in gaps if gap > STALL_MS)}",
        f"{len(gaps):,}",
    )


def run(folder: Path, files: int, builtin: bool = False) -> list[tuple[str, ...]]:
    app = QCoreApplication.instance() or QCoreApplication([])
    collect_on_gui_thread(app)  # as the app does: cycles collected on the GUI thread only
    written = write_folder(folder / "notes", files)
    probe, loop = Probe(), QEventLoop()
    idle = _probed(probe, loop, 3.0)
    spinning = _spinning(probe, loop, 3.0)

    owner = QObject()
    reports: list[IndexProgress] = []
    ended: list[SyncReport | Failure] = []
    # The app's default embeds every chunk too, on the run's own thread: the numpy and
    # tokenizers work beside the window is part of what is measured.
    embedder = load_builtin_embedder() if builtin else None
    database = folder / "data" / "knowledge.db"
    operation = add_folder(owner, database, "notes", folder / "notes", embedder=embedder)
    operation.on_progress(reports.append)
    operation.on_success(lambda report: (ended.append(report), loop.quit()))
    operation.on_failure(lambda failure: (ended.append(failure), loop.quit()))
    probe.start()
    started = time.perf_counter()
    operation.start()
    loop.exec()
    took = time.perf_counter() - started
    probe.stop()
    del app
    [report] = ended
    assert isinstance(report, SyncReport), report
    assert report.added == files and not report.failed
    busy = probe.gaps
    header = ("event loop (5 ms probe)", "worst gap ms", "p99 gap ms", "gaps > 16 ms", "ticks")
    rows: list[tuple[str, ...]] = [
        header,
        _gap_row("idle (the baseline)", idle),
        _gap_row("a thread spinning in Python", spinning),
        _gap_row("while indexing", busy),
    ]
    rows.append(
        (
            f"{files:,} files, {written / 1e6:.1f} MB, {report.chunks_written:,} chunks",
            f"{took:.1f} s",
            f"{files / took:,.0f} files/s",
            f"{len(reports):,} progress reports",
            f"worst over idle {max(busy) / max(idle):.1f}x",
        )
    )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--files", type=positive_int, default=10_000, help="files to index")
    parser.add_argument(
        "--builtin-embedder", action="store_true", help="embed the chunks with the built-in model"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        rows = run(Path(folder), args.files, args.builtin_embedder)
    print(f"## knowledge: the GUI thread while indexing\n\n{table(rows)}\n", flush=True)


if __name__ == "__main__":
    main()
