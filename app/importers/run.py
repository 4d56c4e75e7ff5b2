"""An import from start to end, for the command line and the window's operation: read each
input, write each conversation in its own transaction, report per conversation, call back after
each one, stop between conversations when cancelled (what is written is whole). `preview.py`
reads the same inputs (`read_entries`) and writes nothing.

The report is frozen dataclasses, so any front end (and any thread) can show it.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from app.importers import detect, presets_projects, writer
from app.importers.entries import Entry, RefusedEntry
from app.importers.errors import ImportRefusedError
from app.importers.presets_projects import SettingsEntry
from app.importers.sources import open_source
from app.importers.writer import ImportStatus
from app.store.conversations import Store

Progress = Callable[[writer.Outcome], None]


@dataclass(frozen=True, slots=True)
class InputReport:
    path: str
    formats: tuple[str, ...] = ()
    error: str | None = None  # the input could not be read at all
    outcomes: tuple[writer.Outcome, ...] = ()
    # What became of the presets and projects it holds (Branchwise's own exports), a line each.
    settings: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        """Unreadable, or every conversation in it refused."""
        refused = [o for o in self.outcomes if o.status is ImportStatus.REFUSED]
        return self.error is not None or (bool(refused) and len(refused) == len(self.outcomes))


@dataclass(frozen=True, slots=True)
class ImportCounts:
    """How many conversations ended each way, and the messages added in all."""

    imported: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0
    refused: int = 0
    new_messages: int = 0


@dataclass(frozen=True, slots=True)
class ImportReport:
    inputs: tuple[InputReport, ...]
    batch_id: int | None
    dry_run: bool
    cancelled: bool = False

    @property
    def outcomes(self) -> list[writer.Outcome]:
        return [o for item in self.inputs for o in item.outcomes]

    @property
    def counts(self) -> ImportCounts:
        outcomes = self.outcomes
        by_status = Counter(o.status for o in outcomes)
        return ImportCounts(
            by_status[ImportStatus.IMPORTED],
            by_status[ImportStatus.UPDATED],
            by_status[ImportStatus.UNCHANGED],
            by_status[ImportStatus.SKIPPED],
            by_status[ImportStatus.REFUSED],
            sum(o.new_messages for o in outcomes if o.status is not ImportStatus.REFUSED),
        )

    def written(self) -> frozenset[int]:
        """The conversations this import added or added messages to."""
        return frozenset(
            o.conversation_id
            for o in self.outcomes
            if o.conversation_id is not None
            and o.status in (ImportStatus.IMPORTED, ImportStatus.UPDATED)
        )


@dataclass(slots=True)
class InputReading:
    """One input while it is read (its formats, outcomes, or why it cannot be): what its
    `InputReport` will hold."""

    path: Path
    formats: list[str] = field(default_factory=list)
    error: str | None = None
    outcomes: list[writer.Outcome] = field(default_factory=list)
    settings: list[str] = field(default_factory=list)

    def report(self) -> InputReport:
        return InputReport(
            str(self.path),
            tuple(self.formats),
            self.error,
            tuple(self.outcomes),
            tuple(self.settings),
        )


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
    readings: list[InputReading] = []
    for path in paths:
        item = InputReading(path)
        readings.append(item)
        if _import_input(item, store, batch, dry_run, progress, cancel, only):
            # Stopped between conversations: what was written stays, with its batch to undo.
            return ImportReport(tuple(i.report() for i in readings), batch, dry_run, True)
    report = ImportReport(tuple(item.report() for item in readings), batch, dry_run)
    if batch is not None and store is not None and not report.counts.new_messages:
        writer.drop_empty_batch(store, batch)
        report = replace(report, batch_id=None)
    return report


def _import_input(
    item: InputReading,
    store: Store | None,
    batch: int | None,
    dry_run: bool,
    progress: Progress | None,
    cancel: threading.Event | None,
    only: set[tuple[str, str]] | None,
) -> bool:
    """Import one input's conversations into `item`; True when a cancel stopped it."""
    for entry in read_entries(item):
        if cancel is not None and cancel.is_set():
            return True
        if isinstance(entry, SettingsEntry):
            item.settings += presets_projects.restore(store, entry, dry_run)
            continue
        if isinstance(entry, RefusedEntry):
            outcome = writer.Outcome(
                ImportStatus.REFUSED,
                entry.where,
                entry.title,
                None,
                entry.source_id,
                reason=entry.reason,
            )
        elif only is not None and (entry.source_format, entry.source_id) not in only:
            continue
        elif dry_run or store is None:
            outcome = writer.plan(store, entry, entry.where)
        else:
            outcome = writer.write(store, batch or 0, entry, entry.where)
            if outcome.status is ImportStatus.IMPORTED and outcome.conversation_id is not None:
                presets_projects.join(store, outcome.conversation_id, entry)
        item.outcomes.append(outcome)
        if progress is not None:
            progress(outcome)
    return False


def read_entries(item: InputReading) -> Iterator[Entry]:
    """The entries of one input, its formats and a failure to read it noted in `item`."""
    path = item.path
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
            item.outcomes.append(writer.Outcome(ImportStatus.REFUSED, path.name, reason=str(exc)))
