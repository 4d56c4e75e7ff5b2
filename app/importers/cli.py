"""`branchwise import PATH... [--data-dir DIR] [--dry-run] [--json]` and `branchwise export
--data-dir DIR --out FILE`, for scripts and big exports (no window, no Qt).

`import` prints one line per conversation (imported, updated with N new messages, unchanged,
skipped, refused with the reason), or the whole report as JSON, and exits 1 only when an input
cannot be read at all or every conversation in one is refused (an unchanged re-import is a
success). `--dry-run` reads everything and writes nothing: it plans against a snapshot copy
of the store, so even an older store is left unmigrated.

Both may run while the app is open on the same data folder: they open the store beside it,
never taking the reply it is writing for an orphan of a crash (see `Store.open_another`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from app.importers import run
from app.importers.archive import write_archive
from app.importers.writer import ImportStatus
from app.paths import AppPaths
from app.store.conversations import Store
from app.store.database_file import snapshot
from app.store.records import StoreError

_DONE = {
    ImportStatus.IMPORTED: "imported",
    ImportStatus.UPDATED: "updated",
    ImportStatus.UNCHANGED: "unchanged",
    ImportStatus.SKIPPED: "skipped",
    ImportStatus.REFUSED: "REFUSED",
}


def main(argv: list[str]) -> int:
    if argv[:1] == ["export"]:
        return _export(argv[1:])
    return _import(argv[1:] if argv[:1] == ["import"] else argv)


def _import(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="branchwise import",
        description="Import chat history (ChatGPT, Claude, Open WebUI, LibreChat, LM Studio, "
        "Jan, SillyTavern, text-generation-webui, Chatbox, Branchwise) with every branch.",
    )
    parser.add_argument(
        "paths", nargs="+", type=Path, metavar="PATH", help="an export file, zip or folder"
    )
    parser.add_argument("--data-dir", help="the app's data folder (default: the usual one)")
    parser.add_argument("--dry-run", action="store_true", help="report only; write nothing")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    database = AppPaths.resolve(args.data_dir).database
    try:
        with _store_for(database, args.dry_run) as store:
            report = run.import_paths(
                args.paths,
                store,
                dry_run=args.dry_run,
                progress=None if args.json else _print_outcome,
            )
    except StoreError as exc:
        print(f"branchwise import: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(_as_json(report), ensure_ascii=False, indent=1))
    else:
        _print_summary(report)
    return 1 if any(item.failed for item in report.inputs) else 0


@contextmanager
def _store_for(database: Path, dry_run: bool) -> Iterator[Store | None]:
    """The store to import into, opened beside a running app; for a dry run a snapshot copy
    of it (None where there is no store yet), removed afterwards."""
    if not dry_run:
        with Store.open_another(database) as store:
            yield store
    elif not database.exists():
        yield None
    else:
        with tempfile.TemporaryDirectory(prefix="branchwise-dry-run-") as folder:
            copy = Path(folder) / database.name
            snapshot(database, copy)
            with Store.open_another(copy) as store:
                yield store


def _print_outcome(outcome: Any) -> None:
    line = f"{_DONE[outcome.status]:<10} {outcome.title or outcome.where}"
    if outcome.status is ImportStatus.UPDATED:
        line += f" ({outcome.new_messages} new messages)"
    elif outcome.status is ImportStatus.IMPORTED:
        line += f" ({outcome.new_messages} messages)"
    if outcome.reason:
        line += f": {outcome.reason}"
    print(line, flush=True)


def _print_summary(report: run.ImportReport) -> None:
    for item in report.inputs:
        for line in item.settings:
            print(line)
        if item.error:
            print(f"branchwise import: {item.path}: {item.error}", file=sys.stderr)
    counts = report.counts
    verb = "Would import" if report.dry_run else "Imported"
    print(
        f"{verb}: {counts.imported} new, {counts.updated} updated "
        f"({counts.new_messages} new messages in all), {counts.unchanged} unchanged, "
        f"{counts.skipped} skipped, {counts.refused} refused."
    )
    if report.batch_id is not None:
        print(f"Import batch {report.batch_id}.")


def _as_json(report: run.ImportReport) -> dict[str, Any]:
    return {
        "dry_run": report.dry_run,
        "batch_id": report.batch_id,
        "counts": dataclasses.asdict(report.counts),
        "inputs": [
            {
                "path": item.path,
                "formats": list(item.formats),
                "error": item.error,
                "presets_and_projects": list(item.settings),
                "conversations": [dataclasses.asdict(o) for o in item.outcomes],
            }
            for item in report.inputs
        ],
    }


def _export(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="branchwise export",
        description="Write every conversation into one file that `branchwise import` restores.",
    )
    parser.add_argument("--data-dir", help="the app's data folder (default: the usual one)")
    parser.add_argument("--out", type=Path, required=True, help="the archive file to write")
    args = parser.parse_args(argv)
    try:
        with Store.open_another(AppPaths.resolve(args.data_dir).database) as store:
            count = write_archive(store, args.out)
    except (StoreError, OSError) as exc:
        print(f"branchwise export: {exc}", file=sys.stderr)
        return 1
    print(f"Exported {count} conversations to {args.out}.")
    return 0
