"""The model session: which model the worker holds and how far its loading has come.

It resolves the start-up model in the background, follows the worker's load, keeps the model's
state (`ModelState`) with the status the window shows for it, hands the cache budgets to the
engine and clears its saved caches. Progress of the start-up resolve is reported from the worker
thread, so `modelStatus` may be emitted there: connect it to methods of GUI-thread QObjects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from app.generation.worker import EngineLike, InferenceWorker
from app.generation.worker_errors import WorkerFailure
from app.generation.worker_events import LoadProgress, ModelLoaded
from app.settings import Preferences

# Runs on the worker thread and returns the folder of the model to load at start-up (for the
# app: the last used model, or the embedded default imported on first start).
ModelResolver = Callable[[Callable[[str, int, int], None]], Path]


class ModelState(StrEnum):
    """How far the model has come. A StrEnum: what reads it as text (logs, a test's output)
    keeps the words it always had."""

    NONE = "none"
    LOADING = "loading"
    READY = "ready"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class ModelStatus:
    """The model's `state` as the window shows it:
    `message` says what is happening (or why it failed), `done` of `total` steps while it loads;
    once ready, the model and what About and the status bar say of it."""

    state: ModelState
    message: str = ""
    done: int = 0
    total: int = 0
    model_id: str | None = None
    context_length: int | None = None
    weights_form: str = ""
    blas: str = ""
    matrix_layout: str = ""
    vision: bool = False


class ModelSession(QObject):
    modelStatus = Signal(ModelStatus)
    notice = Signal(str)  # a load (or clearing saved caches) failed: a message for the person

    def __init__(
        self,
        worker: InferenceWorker,
        preferences: Preferences,
        model_resolver: ModelResolver | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.worker = worker
        self.preferences = preferences
        self._resolver = model_resolver
        self.model_info: ModelLoaded | None = None
        # The window shows this before start() runs, so a model about to load never reads as
        # "no model" for a frame.
        self.last_model_status = ModelStatus(ModelState.NONE)
        if model_resolver is not None:
            self.last_model_status = ModelStatus(ModelState.LOADING, "Preparing the model…")
        worker.loadStarted.connect(self._on_load_started)
        worker.loadProgress.connect(self._on_load_progress)
        worker.modelLoaded.connect(self._on_model_loaded)
        worker.loadFailed.connect(self._on_load_failed)

    @property
    def model_state(self) -> ModelState:
        return self.last_model_status.state

    @property
    def model_id(self) -> str | None:
        """The loaded model's id; None while none is loaded."""
        return self.model_info.model_id if self.model_info else None

    def start(self) -> None:
        """Resolve and load the start-up model in the background (the window is already up)."""
        if self._resolver is None:
            return
        resolver = self._resolver
        self._set_model_state(ModelStatus(ModelState.LOADING, "Preparing the model…"))

        def resolve(_engine: EngineLike | None) -> Path:
            return resolver(self._report_progress)

        self.worker.call(resolve, on_done=self.worker.load_model, on_error=self._resolve_failed)

    def load_model(self, path: str | Path) -> None:
        """Load the model at `path`; the session says "loading" at once, so nothing is sent to
        the model being replaced while the load waits its turn in the worker's queue."""
        self._set_model_state(ModelStatus(ModelState.LOADING, f"Loading {Path(path).name}…"))
        self.worker.load_model(path)

    def set_cache_budget(self, budget_bytes: int) -> None:
        self.preferences.cache_budget_bytes = budget_bytes
        self.worker.set_cache_budget(budget_bytes)

    def set_disk_budget(self, budget_bytes: int) -> None:
        self.preferences.disk_budget_bytes = budget_bytes
        self.worker.call_each(partial(_apply_disk_budget, budget_bytes))

    def clear_saved_caches(self, on_done: Callable[[bool], None] | None = None) -> None:
        """Delete the loaded model's saved cache files, and its caches in memory, which idle time
        would otherwise save again at once; `on_done(True)` once done, `on_done(False)` when no
        model is loaded to say which files are its own."""
        self.worker.call(_clear_saved, on_done=on_done, on_error=self.notice.emit)

    def _report_progress(self, stage: str, done: int, total: int) -> None:
        self._set_model_state(ModelStatus(ModelState.LOADING, stage, done, total))

    def _resolve_failed(self, message: str) -> None:
        self._set_model_state(ModelStatus(ModelState.FAILED, message))

    def _set_model_state(self, status: ModelStatus) -> None:
        self.last_model_status = status
        self.modelStatus.emit(status)

    @Slot(str)
    def _on_load_started(self, path: str) -> None:
        self.model_info = None
        self._set_model_state(ModelStatus(ModelState.LOADING, f"Loading {Path(path).name}…"))

    @Slot(object)
    def _on_load_progress(self, progress: LoadProgress) -> None:
        self._set_model_state(
            ModelStatus(ModelState.LOADING, progress.stage, progress.done, progress.total)
        )

    @Slot(object)
    def _on_model_loaded(self, info: ModelLoaded) -> None:
        self.model_info = info
        self.preferences.model_id = info.model_id
        # Read here: the preferences' QSettings must not be used from the worker thread.
        self.worker.set_cache_budget(self.preferences.cache_budget_bytes)
        disk_budget = self.preferences.disk_budget_bytes
        if disk_budget is not None:  # else the engine's default, worked out on the worker
            self.worker.call_each(partial(_apply_disk_budget, disk_budget))
        self._set_model_state(
            ModelStatus(
                ModelState.READY,
                f"{info.model_id} is ready",
                model_id=info.model_id,
                context_length=info.context_length,
                weights_form=info.weights_form,
                blas=info.blas,
                matrix_layout=info.matrix_layout,
                vision=info.vision,
            )
        )

    @Slot(object)
    def _on_load_failed(self, failure: WorkerFailure) -> None:
        self.model_info = None
        self._set_model_state(ModelStatus(ModelState.FAILED, failure.message))
        self.notice.emit(f"The model could not be loaded: {failure.message}")


def _apply_disk_budget(budget_bytes: int, engine: EngineLike) -> None:
    engine.disk_budget_bytes = budget_bytes


def _clear_saved(engine: EngineLike | None) -> bool:
    if engine is None:
        return False
    engine.clear_cache()
    engine.clear_saved_caches()
    return True
