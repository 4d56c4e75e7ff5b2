"""Long model jobs (import a GGUF, copy a folder, download) off the GUI thread, with progress
and cancel, reporting through signals.

A GGUF import or a Dhara conversion runs MLX, so it goes to the inference worker (the one thread
that may touch MLX); copying files and downloading do not, so they get a plain thread and never
queue behind a reply.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from app.library.install import import_dhara_folder, import_folder, import_gguf_file

if TYPE_CHECKING:
    from app.generation.worker import InferenceWorker

# job(progress, cancel) -> the new library entry's folder
Job = Callable[[Callable[[int, int], None], threading.Event], Path]


class ModelTask(QObject):
    """One job: `progressed(done, total)`, then `succeeded(path)` or `failed(message)`.

    The signals are emitted from the job's thread; connect them to methods of GUI objects."""

    progressed = Signal(object, object)  # ints, possibly bytes beyond 2**31
    succeeded = Signal(object)  # Path of the new entry
    failed = Signal(str)

    def __init__(self, description: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.description = description
        self.cancel_event = threading.Event()
        # A task whose dialog closed mid-way stops its job instead of reporting to no one.
        cancel_event = self.cancel_event
        self.destroyed.connect(lambda *_: cancel_event.set())

    def cancel(self) -> None:
        self.cancel_event.set()

    def report(self, done: int, total: int) -> None:
        _emit(self.progressed, done, total)

    def run_on_worker(self, worker: InferenceWorker, job: Job) -> None:
        def run(_engine: Any) -> Path:
            return job(self.report, self.cancel_event)

        worker.call(run, on_done=self.succeeded.emit, on_error=self.failed.emit)

    def run_in_thread(self, job: Job) -> None:
        def run() -> None:
            try:
                path = job(self.report, self.cancel_event)
            except Exception as exc:  # every failure must reach the person as a message
                _emit(self.failed, str(exc).strip() or type(exc).__name__)
                return
            _emit(self.succeeded, path)

        threading.Thread(target=run, name=f"model-task: {self.description}", daemon=True).start()


def _emit(signal: Any, *values: object) -> None:
    """Emit from the job's thread; once the task is deleted (its dialog closed) there is no one
    left to tell, and Qt says so with a RuntimeError."""
    with contextlib.suppress(RuntimeError):
        signal.emit(*values)


def import_gguf_job(gguf: Path, models_dir: Path) -> Job:
    def job(progress: Callable[[int, int], None], cancel: threading.Event) -> Path:
        return import_gguf_file(gguf, models_dir, progress=progress, cancel=cancel)

    return job


def import_dhara_job(folder: Path, models_dir: Path) -> Job:
    def job(progress: Callable[[int, int], None], cancel: threading.Event) -> Path:
        return import_dhara_folder(folder, models_dir, progress=progress, cancel=cancel)

    return job


def import_folder_job(folder: Path, models_dir: Path, link: bool) -> Job:
    def job(progress: Callable[[int, int], None], cancel: threading.Event) -> Path:
        return import_folder(folder, models_dir, link=link, progress=progress, cancel=cancel)

    return job


def download_job(repo_id: str, models_dir: Path, endpoint: str | None = None) -> Job:
    def job(progress: Callable[[int, int], None], cancel: threading.Event) -> Path:
        # huggingface_hub takes a while to import: only when someone downloads.
        from app.library.downloads import download_model

        return download_model(
            repo_id, models_dir, progress=progress, cancel=cancel, endpoint=endpoint
        )

    return job
