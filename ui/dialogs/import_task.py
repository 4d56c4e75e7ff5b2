"""A chat-history import off the GUI thread: the preview, the import itself and its undo each run
in a thread of their own with their own store connection (a `Store` belongs to the thread that
opened it; `Store.open_another` leaves the replies the app is streaming alone), and report
through Qt signals carrying plain values (dicts, lists, ints, str), so the window stays
responsive however big the export is.

Cancel stops between conversations: what was written is whole conversations only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.importers import detect, run, writer
from app.importers.errors import ImportRefusedError
from app.importers.sources import open_source
from app.store.conversations import Store, StoreError

_log = logging.getLogger(__name__)


def report_data(report: run.ImportReport) -> dict[str, Any]:
    """The report as plain data: counts, the batch to undo, and per input its outcomes."""
    return {
        "batch_id": report.batch_id,
        "cancelled": report.cancelled,
        "counts": report.counts(),
        "inputs": [
            {"path": item.path, "formats": list(item.formats), "error": item.error,
             "outcomes": [dataclasses.asdict(o) for o in item.outcomes]}
            for item in report.inputs
        ],
    }


class ImportTask(QObject):
    """One person's import: `preview`, then `start`, then (perhaps) `undo`, each answered by
    its signal or by `failed(message)`. The signals are emitted from the job's thread."""

    previewed = Signal(object)  # run.preview's dict
    progressed = Signal(object)  # one outcome, as a dict (status, title, reason, …)
    finished = Signal(object)  # report_data's dict
    undone = Signal(object)  # {"removed_conversations", "removed_messages", "kept_messages"}
    failed = Signal(str)

    def __init__(self, database: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._database = database
        self.cancel_event = threading.Event()
        self._thread: threading.Thread | None = None
        # A task whose dialog closed mid-way stops its job instead of reporting to no one.
        cancel_event = self.cancel_event
        self.destroyed.connect(lambda *_: cancel_event.set())

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait(self, timeout_s: float | None = None) -> None:
        """Block until the job's thread ends (closing the app, or a test's teardown)."""
        if self._thread is not None:
            self._thread.join(timeout_s)

    def cancel(self) -> None:
        self.cancel_event.set()

    def preview(self, paths: list[Path]) -> None:
        self._start("preview",
                    lambda: _emit(self.previewed, run.preview(paths, self.cancel_event)))

    def start(self, paths: list[Path], only: set[tuple[str, str]] | None = None) -> None:
        """Import `paths`, only the (format, source id) pairs in `only` when given."""
        self.cancel_event.clear()

        def job() -> None:
            with Store.open_another(self._database) as store:
                report = run.import_paths(
                    paths, store, only=only, cancel=self.cancel_event,
                    progress=lambda o: _emit(self.progressed, dataclasses.asdict(o)),
                )
            _emit(self.finished, report_data(report))

        self._start("import", job)

    def undo(self, batch_id: int) -> None:
        def job() -> None:
            with Store.open_another(self._database) as store:
                result = writer.undo_batch(store, batch_id)
            _emit(self.undone, dataclasses.asdict(result))

        self._start("undo import", job)

    def _start(self, name: str, job: Callable[[], None]) -> None:
        def run_job() -> None:
            try:
                job()
            except (ImportRefusedError, StoreError, OSError) as exc:
                _emit(self.failed, str(exc).strip() or type(exc).__name__)
            except Exception as exc:  # a bug: the person still hears of it, nothing is lost
                _log.exception("The chat history %s failed", name)
                _emit(self.failed, f"The import stopped on an unexpected error: {exc!r}")

        self._thread = threading.Thread(target=run_job, name=f"chat history {name}", daemon=True)
        self._thread.start()


def _emit(signal: Any, *values: object) -> None:
    """Emit from the job's thread; once the task is deleted (its dialog closed) there is no one
    left to tell, and Qt says so with a RuntimeError."""
    with contextlib.suppress(RuntimeError):
        signal.emit(*values)


EXPORT_SUFFIXES = (".json", ".jsonl")


def is_chat_export(path: Path) -> bool:
    """Whether a dropped path is meant for an import rather than as an attachment: a folder or a
    zip always (the preview then says what it holds), a JSON or JSONL file when its contents
    are a known app's conversations; anything else is an attachment. Reads the file: call it
    off the GUI thread."""
    suffix = path.suffix.lower()
    if path.is_dir() or suffix == ".zip":
        return True
    if suffix not in EXPORT_SUFFIXES:
        return False
    try:
        with open_source(path) as source:
            return bool(detect.readers(source))
    except (ImportRefusedError, OSError):
        return False


class DropSorter(QObject):
    """Sorts dropped paths into chat exports and attachments on a thread of its own;
    `sorted(exports, attachments)` carries two lists of path strings."""

    sorted = Signal(list, list)

    def sort(self, paths: list[str]) -> None:
        def job() -> None:
            exports, others = [], []
            for path in paths:
                (exports if is_chat_export(Path(path)) else others).append(path)
            _emit(self.sorted, exports, others)

        threading.Thread(target=job, name="sort dropped files", daemon=True).start()
