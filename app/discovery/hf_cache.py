"""Models in the Hugging Face cache (`models--org--name/`): a repository's snapshot
(`snapshots/REVISION/`, its files links into `blobs/`) read through its links, the revision
`refs/main` names first. An unfinished download (`blobs/*.incomplete`, a shard the index names
but the snapshot lacks, a link to a blob that is gone) is listed with its reason."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from app.discovery.describe import describe_folder, describe_gguf, unreadable
from app.discovery.found import FoundModel, Source


def scan_cache(root: Path, stop: Callable[[], bool] = lambda: False) -> Iterator[FoundModel]:
    try:
        repos = sorted(p for p in root.iterdir() if p.name.startswith("models--"))
    except OSError as error:
        yield unreadable(root, Source.HUGGINGFACE, f"the cache cannot be read: {error}")
        return
    for repo in repos:
        if stop():
            return
        yield from _repository(repo)


def _repository(repo: Path) -> Iterator[FoundModel]:
    name = "/".join(repo.name.removeprefix("models--").split("--"))
    try:
        snapshots = _snapshots(repo)
        partial = sorted((repo / "blobs").glob("*.incomplete"))
    except OSError as error:
        yield unreadable(repo, Source.HUGGINGFACE, f"this repository cannot be read: {error}")
        return
    for snapshot in snapshots:
        try:
            found = list(_snapshot(snapshot, name))
        except OSError as error:
            yield unreadable(snapshot, Source.HUGGINGFACE, f"this snapshot cannot be read: {error}")
            continue
        for model in found:
            yield _unfinished(model, len(partial)) if partial else model


def _snapshots(repo: Path) -> list[Path]:
    """The snapshot `refs/main` names, else every snapshot (newest first)."""
    main = repo / "refs" / "main"
    if main.is_file():
        revision = main.read_text(encoding="utf-8").strip()
        if revision and (repo / "snapshots" / revision).is_dir():
            return [repo / "snapshots" / revision]
    folder = repo / "snapshots"
    if not folder.is_dir():
        return []
    return sorted(
        (p for p in folder.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True
    )


def _snapshot(snapshot: Path, name: str) -> Iterator[FoundModel]:
    entries = sorted(p.name for p in snapshot.iterdir())
    if "config.json" in entries and any(n.endswith((".safetensors", ".bin")) for n in entries):
        yield describe_folder(snapshot, Source.HUGGINGFACE, name)
        return
    for file in entries:
        if file.lower().endswith(".gguf"):
            yield describe_gguf(snapshot / file, Source.HUGGINGFACE, f"{name}/{file[:-5]}")


def _unfinished(model: FoundModel, count: int) -> FoundModel:
    files = "file is" if count == 1 else "files are"
    reason = f"its download is unfinished ({count} {files} still partial in the cache)"
    if model.reason:
        reason = f"{reason}: {model.reason}"
    return replace(model, runnable=False, reason=reason)
