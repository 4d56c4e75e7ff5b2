"""Chat import speed: messages per second from a ChatGPT export, each figure beside the time
`json.load` takes to parse the same file in the same run.

    .venv/bin/python bench/importers.py [--megabytes N] [--runs N]

The export is the big-export test's (tests/app/importers/big_export.py): one conversation's
JSON written again and again with new ids, each turn shaped like a 2025 export (a hidden
system node, thoughts, search metadata, a regenerated answer). Reading it (a dry run: streamed,
converted, written nowhere) and importing it into a fresh store are timed against `json.load`,
the least any reader of the file must do; the ratio, import over parse, is what carries from
one machine to another. Best of `--runs` for each side, CPU and wall time.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.importers import run
from app.store.conversations import Store
from bench.cli import description
from bench.table import table
from tests.app.importers.big_export import MESSAGES_PER_CONVERSATION, write_big_export

HEADER = ("measure (best of runs)", "wall s", "cpu s", "messages/s (cpu)", "over json.load (cpu)")


def best_s(work: Callable[[], object], runs: int) -> tuple[float, float]:
    """The smallest wall and CPU seconds of `runs` calls of `work`."""
    wall, cpu = float("inf"), float("inf")
    for _ in range(runs):
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        work()
        cpu = min(cpu, time.process_time() - start_cpu)
        wall = min(wall, time.perf_counter() - start_wall)
    return wall, cpu


def rows(folder: Path, megabytes: float, runs: int) -> tuple[str, list[tuple[str, ...]]]:
    """What the export holds, and the table: HEADER, then json.load, the dry run and the
    import."""
    path = folder / "conversations.json"
    conversations = write_big_export(path, int(megabytes * 1024**2))
    messages = conversations * MESSAGES_PER_CONVERSATION
    stores = iter(range(runs))

    def parse() -> None:
        with path.open("rb") as raw:
            json.load(raw)

    def dry_run() -> None:
        report = run.import_paths([path], None, dry_run=True)
        assert report.counts.new_messages == messages

    def import_all() -> None:
        with Store.open(folder / f"store{next(stores)}" / "conversations.sqlite3") as store:
            report = run.import_paths([path], store)
        assert report.counts.new_messages == messages

    figures = {
        "json.load of the file (the baseline)": best_s(parse, runs),
        "read and convert (dry run)": best_s(dry_run, runs),
        "import into a new store": best_s(import_all, runs),
    }
    _, baseline_cpu = figures["json.load of the file (the baseline)"]
    held = (
        f"ChatGPT export: {path.stat().st_size / 1e6:.0f} MB, {conversations:,} "
        f"conversations, {messages:,} messages"
    )
    return held, [HEADER] + [
        # Three significant figures: json.load of a small file takes milliseconds.
        (name, f"{wall:.3g}", f"{cpu:.3g}", f"{messages / cpu:,.0f}", f"{cpu / baseline_cpu:.1f}x")
        for name, (wall, cpu) in figures.items()
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--megabytes", type=float, default=50.0, help="the export's size")
    parser.add_argument("--runs", type=int, default=3, help="best of this many for each side")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        held, figures = rows(Path(folder), args.megabytes, args.runs)
    print(f"## importers\n\n{held}\n\n{table(figures)}\n", flush=True)


if __name__ == "__main__":
    main()
