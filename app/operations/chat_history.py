"""Chat history from other apps, as operations: reading the exports for the preview (nothing
written), the import with an outcome reported per conversation, its undo, and sorting files
dropped on the window into chat exports and attachments.

The import and its undo open a store connection of their own on their thread (a `Store` belongs
to the thread that opened it; `Store.open_another` leaves the reply the app is streaming alone).
A cancel stops the import between conversations, so what was written is whole conversations
only; the report then says it was cancelled.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject

from app.importers import preview, run, writer
from app.importers.detect import is_chat_export
from app.importers.errors import ImportRefusedError
from app.operations.changes import Changes
from app.operations.operation import JobContext, Operation
from app.store.conversations import Store, StoreError

# What a file, an archive or the store can refuse: said to the person in the error's words.
_REFUSALS = (ImportRefusedError, StoreError, OSError)


def preview_chats(owner: QObject, paths: list[Path]) -> Operation[preview.Preview, None]:
    """What importing `paths` would bring; a cancel (the dialog closed) stops the reading."""

    def job(context: JobContext[None]) -> preview.Preview:
        return preview.preview(paths, context.cancel_event)

    return Operation(owner, "Reading the chat exports", job, expected=_REFUSALS)


def import_chats(
    owner: QObject, database: Path, paths: list[Path], only: set[tuple[str, str]] | None = None
) -> Operation[run.ImportReport, writer.Outcome]:
    """Import `paths` into the store at `database` (only the (format, source id) pairs in `only`
    when given), reporting each conversation's outcome as it is written."""

    def job(context: JobContext[writer.Outcome]) -> run.ImportReport:
        with Store.open_another(database) as store:
            return run.import_paths(
                paths, store, only=only, cancel=context.cancel_event, progress=context.report
            )

    return Operation(owner, "Importing chats", job, expected=_REFUSALS, changes=_imported)


def _imported(report: run.ImportReport) -> Changes:
    written = report.written()
    return Changes(conversations=written, conversation_list=bool(written))


def undo_import(
    owner: QObject, database: Path, batch_id: int
) -> Operation[writer.UndoResult, None]:
    """Take import `batch_id` back out (what the person continued from since stays)."""

    def job(_context: JobContext[None]) -> writer.UndoResult:
        with Store.open_another(database) as store:
            return writer.undo_batch(store, batch_id)

    return Operation(owner, "Undoing the import", job, expected=_REFUSALS, changes=_undone)


def _undone(result: writer.UndoResult) -> Changes:
    return Changes(conversations=result.conversation_ids, conversation_list=True)


@dataclass(frozen=True, slots=True)
class DroppedFiles:
    exports: tuple[Path, ...]  # to import (the preview opens on them)
    attachments: tuple[str, ...]  # to attach to the draft, as dropped


def sort_dropped(owner: QObject, paths: Iterable[str]) -> Operation[DroppedFiles, None]:
    """Sort dropped paths into chat exports and attachments; reading a file to find out may
    take a while (a big JSON file), so it is done off the GUI thread."""
    dropped = list(paths)

    def job(_context: JobContext[None]) -> DroppedFiles:
        exports: list[Path] = []
        attachments: list[str] = []
        for path in dropped:
            if is_chat_export(Path(path)):
                exports.append(Path(path))
            else:
                attachments.append(path)
        return DroppedFiles(tuple(exports), tuple(attachments))

    return Operation(owner, "Sorting the dropped files", job)
