"""`branchwise knowledge ...`: knowledge folders from a script or a terminal (no window, no Qt),
through the same index the app uses.

    branchwise knowledge add PATH [--name NAME] [--follow-links]   index a folder (or a file)
    branchwise knowledge sync NAME                                 index what changed since
    branchwise knowledge list [--json]
    branchwise knowledge status NAME [--json]
    branchwise knowledge search NAME QUERY [-k 10] [--json]
    branchwise knowledge remove NAME                               the index only, never files

Each takes `--data-dir DIR` (the app's data folder; the usual one by default), and those that
index or search take `--embedder NAME` (one of `app.knowledge.embedder.EMBEDDERS`; `none` for
BM25 alone; the default is `DEFAULT_EMBEDDER`). `add` and `sync` read the files in a child
process, as the app does (a file that crashes or hangs a reader is listed as failed), print
their progress on stderr and return when the folder is indexed; Ctrl-C stops them, keeping
every file finished (the next `sync` goes on from there). A refusal prints one line saying why
and exits 1; bad arguments exit 2. They may run while the app is open on the same data folder.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

from app.knowledge.embedder import DEFAULT_EMBEDDER, EMBEDDERS, Embedder
from app.knowledge.index import KnowledgeIndex
from app.knowledge.pause import PauseGate
from app.knowledge.reader_process import index_folder_run
from app.knowledge.records import IndexPhase, IndexProgress, KnowledgeError, SyncReport
from app.paths import AppPaths

PROG = "branchwise knowledge"
EXIT_FAILED, EXIT_INTERRUPTED = 1, 130
_PROGRESS_EVERY_S = 1.0


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description="Index and search knowledge folders.")
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add", help="add a folder (or a file) and index it")
    add.add_argument("path", type=Path)
    add.add_argument("--name", help="the knowledge folder's name (default: the folder's)")
    add.add_argument("--follow-links", action="store_true", help="follow symbolic links")
    sync = commands.add_parser("sync", help="index what changed in a knowledge folder")
    sync.add_argument("name")
    listing = commands.add_parser("list", help="list the knowledge folders")
    status = commands.add_parser("status", help="a knowledge folder's files and failures")
    status.add_argument("name")
    search = commands.add_parser("search", help="search a knowledge folder")
    search.add_argument("name")
    search.add_argument("query")
    search.add_argument("-k", type=int, default=10, help="how many results (10)")
    remove = commands.add_parser("remove", help="remove a knowledge folder's index")
    remove.add_argument("name")
    for sub in (add, sync, listing, status, search, remove):
        sub.add_argument("--data-dir", help="the app's data folder (default: the usual one)")
    for sub in (listing, status, search):
        sub.add_argument("--json", action="store_true", help="print JSON")
    for sub in (add, sync, search):
        sub.add_argument(
            "--embedder",
            choices=["none", *EMBEDDERS],
            default=DEFAULT_EMBEDDER or "none",
            help="the embedding model for vectors (none: BM25 alone)",
        )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        with KnowledgeIndex.open(AppPaths.resolve(args.data_dir).knowledge_database) as index:
            return _COMMANDS[args.command](index, args)
    except KnowledgeError as error:
        print(f"{PROG} {args.command}: {error}", file=sys.stderr)
        return EXIT_FAILED


def _embedder(args: argparse.Namespace) -> Embedder | None:
    return None if args.embedder == "none" else EMBEDDERS[args.embedder]()


def _add(index: KnowledgeIndex, args: argparse.Namespace) -> int:
    root = args.path.expanduser().absolute()
    name = args.name or root.name
    index.add(name, root, follow_links=args.follow_links)
    return _index(index, name, _embedder(args))


def _sync(index: KnowledgeIndex, args: argparse.Namespace) -> int:
    return _index(index, args.name, _embedder(args))


def _index(index: KnowledgeIndex, name: str, embedder: Embedder | None) -> int:
    try:
        report = index_folder_run(
            index.path,
            name,
            embedder=embedder,
            cancel=threading.Event(),
            gate=PauseGate(),
            progress=_Progress(),
        )
    except KeyboardInterrupt:
        print(
            f"{PROG}: stopped; the files read so far stay indexed "
            f"(`{PROG} sync {name}` goes on from there).",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    _print_report(report)
    return 0


class _Progress:
    """A line on stderr at most once a second."""

    def __init__(self) -> None:
        self._last = 0.0

    def __call__(self, progress: IndexProgress) -> None:
        now = time.monotonic()
        if now - self._last < _PROGRESS_EVERY_S and progress.phase is not IndexPhase.DONE:
            return
        self._last = now
        print(_progress_line(progress), file=sys.stderr, flush=True)


def _progress_line(progress: IndexProgress) -> str:
    if progress.phase is IndexPhase.EMBEDDING:
        line = f"Embedding {progress.embedded:,}/{progress.to_embed:,} chunks"
    elif progress.phase is IndexPhase.READING:
        line = (
            f"Reading {progress.files_done:,}/{progress.files_total:,} files, "
            f"{progress.chunks:,} chunks, {progress.failures:,} failed"
        )
    else:
        line = f"{progress.phase.value.capitalize()} {progress.collection}"
    if progress.paused:
        line += " (paused while a reply is generating)"
    elif progress.seconds_left is not None and progress.phase is not IndexPhase.DONE:
        line += f", about {progress.seconds_left:,.0f} s left"
    return line


def _print_report(report: SyncReport) -> None:
    print(
        f"{report.collection}: {report.state.value}; {report.added} added, {report.changed} "
        f"changed, {report.renamed} renamed, {report.removed} removed, {report.unchanged} "
        f"unchanged; {report.chunks_written:,} chunks written, {report.embedded:,} embedded."
    )
    for path, reason in report.failed:
        print(f"  not indexed: {path}: {reason}")
    for path, reason in report.skipped:
        print(f"  passed over: {path}: {reason}")


def _list(index: KnowledgeIndex, args: argparse.Namespace) -> int:
    rows = [_listed(index, collection.name) for collection in index.collections()]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    for row in rows:
        print(
            f"{row['name']}  {row['state']}  {row['files']:,} files  {row['chunks']:,} chunks  "
            f"{row['failed']:,} not indexed  {row['root']}"
        )
    return 0


def _listed(index: KnowledgeIndex, name: str) -> dict[str, Any]:
    status = index.status(name)
    collection = status.collection
    return {
        "name": collection.name,
        "root": collection.root,
        "state": collection.state.value,
        "files": status.files,
        "chunks": status.chunks,
        "failed": len(status.failed),
        "embedding_model": collection.embedding_model,
        "synced_at": collection.synced_at,
    }


def _status(index: KnowledgeIndex, args: argparse.Namespace) -> int:
    status = index.status(args.name)
    if args.json:
        shown = {
            "files": status.files,
            "chunks": status.chunks,
            "failed": [{"path": path, "reason": reason} for path, reason in status.failed],
            "embedding_model": status.collection.embedding_model,
        }
        print(json.dumps(shown, ensure_ascii=False, indent=1))
        return 0
    collection = status.collection
    print(f"{collection.name}: {collection.root} ({collection.state.value})")
    vectors = ""
    if collection.embedding_model is not None:
        vectors = f", {status.embedded_chunks:,} with vectors of {collection.embedding_model}"
    print(f"{status.files:,} files, {status.chunks:,} chunks{vectors}")
    for path, reason in status.failed:
        print(f"  not indexed: {path}: {reason}")
    return 0


def _search(index: KnowledgeIndex, args: argparse.Namespace) -> int:
    hits = index.search([args.name], args.query, args.k, embedder=_embedder(args))
    if args.json:
        shown = [
            {
                "path": hit.path,
                "page": hit.page,
                "start": hit.start,
                "end": hit.end,
                "text": hit.text,
                "score": hit.score,
            }
            for hit in hits
        ]
        print(json.dumps(shown, ensure_ascii=False, indent=1))
        return 0
    for hit in hits:
        where = hit.path + (f", page {hit.page}" if hit.page is not None else "")
        print(f"{hit.score:.4f}  {where}  [{hit.start}:{hit.end}]")
        print("    " + " ".join(hit.text.split())[:300])
    return 0


def _remove(index: KnowledgeIndex, args: argparse.Namespace) -> int:
    index.remove(args.name)
    print(f"Removed the index of {args.name}; its files were not touched.")
    return 0


_COMMANDS = {
    "add": _add,
    "sync": _sync,
    "list": _list,
    "status": _status,
    "search": _search,
    "remove": _remove,
}
