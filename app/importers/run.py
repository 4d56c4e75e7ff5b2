"""An import from start to end, for the command line and (later) the window's worker: read each
input, write each conversation in its own transaction, report per conversation, call back after
each one, stop between conversations when cancelled (what is written is whole). `preview` reads
the same inputs and writes nothing.

Both return plain data (dataclasses, or dicts for the preview) so any front end can show them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.importers import detect, writer
from app.importers.entries import Entry, RefusedEntry
from app.importers.errors import ImportRefusedError
from app.importers.sources import open_source
from app.importers.tree import ImportedConversation
from app.store.conversations import Store

Progress = Callable[[writer.Outcome], None]


@dataclass(slots=True)
class InputReport:
    path: str
    formats: list[str] = field(default_factory=list)
    error: str | None = None  # the input could not be read at all
    outcomes: list[writer.Outcome] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """Unreadable, or every conversation in it refused."""
        refused = [o for o in self.outcomes if o.status == "refused"]
        return self.error is not None or (bool(refused) and len(refused) == len(self.outcomes))


@dataclass(slots=True)
class ImportReport:
    inputs: list[InputReport]
    batch_id: int | None
    dry_run: bool
    cancelled: bool = False

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(("imported", "updated", "unchanged", "skipped", "refused"), 0)
        for item in self.inputs:
            for outcome in item.outcomes:
                counts[outcome.status] += 1
        counts["new_messages"] = sum(
            o.new_messages for i in self.inputs for o in i.outcomes if o.status != "refused"
        )
        return counts


def import_paths(
    paths: Iterable[Path],
    store: Store | None,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    only: set[tuple[str, str]] | None = None,
) -> ImportReport:
    """Import every conversation in `paths` (files, zips, folders). `store` None with
    `dry_run`: plan against an empty store. `only`: the (format, source id) pairs to take."""
    paths = list(paths)
    batch = None
    if not dry_run:
        if store is None:
            raise ValueError("A store is needed unless dry_run is set.")
        batch = writer.begin_batch(store, ", ".join(p.name for p in paths))
    report = ImportReport([], batch, dry_run)
    for path in paths:
        item = InputReport(str(path))
        report.inputs.append(item)
        for entry in _entries(path, item):
            if cancel is not None and cancel.is_set():
                report.cancelled = True
                return report
            if isinstance(entry, RefusedEntry):
                outcome = writer.Outcome("refused", entry.where, entry.title, None,
                                         entry.source_id, reason=entry.reason)
            elif only is not None and (entry.source_format, entry.source_id) not in only:
                continue
            elif dry_run or store is None:
                outcome = writer.plan(store, entry, entry.where)
            else:
                outcome = writer.write(store, batch or 0, entry, entry.where)
            item.outcomes.append(outcome)
            if progress is not None:
                progress(outcome)
    if batch is not None and not report.counts()["new_messages"]:
        writer.drop_empty_batch(store, batch)  # type: ignore[arg-type]
        report.batch_id = None
    return report


def _entries(path: Path, item: InputReport) -> Iterator[Entry]:
    try:
        with open_source(path) as source:
            for kind, entries in detect.readers(source):
                item.formats.append(kind)
                iterator = iter(entries)
                while True:
                    try:
                        entry = next(iterator)
                    except StopIteration:
                        break
                    except ImportRefusedError as exc:
                        yield RefusedEntry(path.name, str(exc))
                        break
                    yield entry
    except ImportRefusedError as exc:
        if not item.outcomes:
            item.error = str(exc)
        else:
            item.outcomes.append(writer.Outcome("refused", path.name, reason=str(exc)))


def preview(paths: Iterable[Path], cancel: threading.Event | None = None) -> dict[str, Any]:
    """What an import of `paths` would bring, without writing: per input and format, the
    conversations (with their source ids, for choosing), messages, branches, date range,
    attachments found and missing, and problems. `cancel` stops it between conversations (the
    person closed the preview)."""
    inputs = []
    for path in paths:
        item = InputReport(str(path))
        formats: dict[str, dict[str, Any]] = {}
        problems: list[str] = []
        for entry in _entries(path, item):
            if cancel is not None and cancel.is_set():
                break
            if isinstance(entry, RefusedEntry):
                said = entry.reason.startswith(entry.where)
                problems.append(entry.reason if said else f"{entry.where}: {entry.reason}")
                continue
            summary = formats.setdefault(entry.source_format, _empty_summary())
            _add(summary, entry)
        if item.error:
            problems.append(item.error)
        for summary in formats.values():
            times = summary.pop("_times")
            summary["first"] = _iso(min(times)) if times else None
            summary["last"] = _iso(max(times)) if times else None
        inputs.append({"path": str(path), "formats": formats, "problems": problems,
                       "readable": item.error is None})
    return {"inputs": inputs}


def _empty_summary() -> dict[str, Any]:
    return {"conversations": [], "messages": 0, "branches": 0, "attachments_found": 0,
            "attachments_missing": [], "warnings": [], "_times": []}


def _add(summary: dict[str, Any], conversation: ImportedConversation) -> None:
    parents: dict[str | None, int] = {}
    for message in conversation.messages:
        parents[message.parent_id] = parents.get(message.parent_id, 0) + 1
        for attachment in message.attachments:
            if attachment.missing:
                summary["attachments_missing"].append(attachment.name)
            else:
                summary["attachments_found"] += 1
        if message.created_at is not None:
            summary["_times"].append(message.created_at)
    leaves = sum(1 for m in conversation.messages if m.source_id not in parents)
    summary["messages"] += len(conversation.messages)
    summary["branches"] += leaves
    summary["warnings"] += [f"{conversation.title}: {w}" for w in conversation.warnings]
    summary["conversations"].append({
        "source_id": conversation.source_id, "title": conversation.title,
        "messages": len(conversation.messages), "branches": leaves,
        "empty": not conversation.messages,
    })


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")
