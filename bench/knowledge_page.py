"""The GUI thread while the Knowledge page shows a large folder being indexed (issue 43 item 1:
no GUI stall over 16 ms): `bench/knowledge_gui.py`'s probe (the worst gap between the ticks of
a 5 ms timer), idle with the page open and then while a folder added through the page is
indexed by the app's own objects (`KnowledgeFolders` and `KnowledgeActivity`, as `ui.main`
makes them), with the page repainting its progress at every report and reading the index's
figures again every second, as a person watching it would see.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/knowledge_page.py [--files N]

The idle probe with the page open is the baseline measured in the same run; the ratio is what
indexing, and the page following it, add.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QEventLoop
from PySide6.QtWidgets import QApplication

from app.gui_thread_gc import collect_on_gui_thread
from app.knowledge.pause import PauseGate
from app.knowledge.records import SyncReport
from app.operations.knowledge_activity import KnowledgeActivity
from app.operations.knowledge_folders import KnowledgeFailure, KnowledgeFolders
from app.settings import Preferences
from bench.cli import description, positive_int
from bench.knowledge_gui import STALL_MS, Probe, _gap_row, _probed, write_folder
from bench.table import table
from ui.knowledge.knowledge_page import KnowledgePage
from ui.widgets.theme import apply_theme


def run(folder: Path, files: int) -> list[tuple[str, ...]]:
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([])
    collect_on_gui_thread(app)  # as the app does: cycles collected on the GUI thread only
    apply_theme(app, "light")
    written = write_folder(folder / "notes", files)
    folders = KnowledgeFolders(folder / "data" / "knowledge.db", gate=PauseGate())
    activity = KnowledgeActivity(folders)
    page = KnowledgePage(activity, folder / "models", Preferences(folder / "settings.ini"))
    page.resize(1000, 620)
    page.show()
    render_ms: list[float] = []
    render = page._render  # the page's own work at each report and each read, timed

    def timed_render() -> None:
        began = time.perf_counter()
        render()
        render_ms.append((time.perf_counter() - began) * 1000)

    page._render = timed_render
    probe, loop = Probe(), QEventLoop()
    idle = _probed(probe, loop, 3.0)

    ended: list[SyncReport | KnowledgeFailure] = []
    reads = [0]
    page.shown.connect(lambda: reads.__setitem__(0, reads[0] + 1))
    folders.synced.connect(lambda report: (ended.append(report), loop.quit()))
    folders.failed.connect(lambda failure: (ended.append(failure), loop.quit()))
    probe.start()
    started = time.perf_counter()
    page.add("Notes", folder / "notes")
    loop.exec()
    took = time.perf_counter() - started
    probe.stop()
    folders.stop()
    [report] = ended
    assert isinstance(report, SyncReport), report
    assert report.added == files and not report.failed
    busy = probe.gaps
    render_ms.sort()
    header = ("event loop (5 ms probe)", "worst gap ms", "p99 gap ms", "gaps > 16 ms", "ticks")
    return [
        header,
        _gap_row("idle, the page open (the baseline)", idle),
        _gap_row("the page following an index run", busy),
        (
            f"{files:,} files, {written / 1e6:.1f} MB, {report.chunks_written:,} chunks",
            f"{took:.1f} s",
            f"{reads[0]:,} reads of the figures",
            f"page state: {page.detail.state.value}",
            f"worst over idle {max(busy) / max(idle):.1f}x",
        ),
        (
            f"the page's own work: {len(render_ms):,} repaints",
            f"{render_ms[-1]:.1f}",
            f"{render_ms[int(0.99 * (len(render_ms) - 1))]:.1f}",
            f"{sum(1 for ms in render_ms if ms > STALL_MS)}",
            f"median {render_ms[len(render_ms) // 2]:.2f} ms",
        ),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--files", type=positive_int, default=3_000, help="files to index")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        rows = run(Path(folder), args.files)
    print(f"## knowledge: the Knowledge page while indexing\n\n{table(rows)}\n", flush=True)


if __name__ == "__main__":
    main()
