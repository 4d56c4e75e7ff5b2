"""The inference worker: one long-lived thread that owns the model, the engine and every MLX object.

The GUI thread talks to it through a queue and hears back through Qt signals that carry plain
Python values only (never mx.arrays), the frozen dataclasses of `app.generation.worker_events`
(a `Signal(dict)` can arrive empty), and failures as a `WorkerFailure` whose `kind` says what
went wrong (app.generation.worker_errors). MLX streams and lazy arrays belong to the thread that
made them, so the model is loaded here too, and `inference`/`mlx` are imported lazily on this
thread: importing `app` must not load MLX (the window appears before the model loads).

Cancel is a `threading.Event` set directly from the GUI thread: a queued slot would run only after
the generation had ended.

`call`'s callbacks come back on the GUI thread through one `GuiRelay`, so the code that asked for
the work may write its own state from them. Failures nobody handles are logged, never dropped.

Saving caches to disk happens only while the queue is empty, in slices of `IDLE_SAVE_S`, so a new
request waits at most one small write and tokens are never delayed by it. Quitting saves for at
most `QUIT_SAVE_S` more: what is still unsaved then only costs a recompute after the restart.

This module holds the thread, its queue and the GUI-thread API; what the queue carries is in
`app.generation.worker_requests`, the engine it builds in `app.generation.worker_engine`, and one
generation's run in `app.generation.worker_generation`.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import queue
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.generation.think_settings import template_kwargs
from app.generation.worker_drafts import WorkerDrafts
from app.generation.worker_engine import EngineFactory, EngineLike, default_engine_factory
from app.generation.worker_errors import FailureKind, WorkerFailure, failure_of
from app.generation.worker_events import (
    GenerationFinished,
    LoadProgress,
    MemoryUse,
    ModelLoaded,
    PrefillProgress,
    TokensReady,
)
from app.generation.worker_generation import run_generation
from app.generation.worker_models import (
    HeldModel,
    ModelRoom,
    Resident,
    WorkerModels,
    available_room,
    save_caches,
)
from app.generation.worker_requests import (
    STOP,
    EngineCall,
    GenerationRequest,
    LoadRequest,
    ModelPreparing,
)
from app.gui_relay import GuiRelay

__all__ = [
    "IDLE_SAVE_S",
    "QUIT_SAVE_S",
    "EngineLike",
    "GenerationRequest",
    "InferenceWorker",
    "default_engine_factory",
]

# Saving caches in idle time: one slice between looks at the queue, and the most spent at quit.
IDLE_SAVE_S = 0.05
QUIT_SAVE_S = 1.0

_log = logging.getLogger(__name__)


class InferenceWorker(QObject):
    """Owns the inference thread. Create it on the GUI thread; call its methods from there.
    `model_room` says how much memory model weights may take (app.generation.worker_models;
    tests set it)."""

    loadStarted = Signal(str)  # model path
    loadProgress = Signal(LoadProgress)
    modelLoaded = Signal(ModelLoaded)
    loadFailed = Signal(WorkerFailure)  # LOAD_FAILED, or a BUG
    # A request naming its model waits for that model to load.
    modelPreparing = Signal(ModelPreparing)
    generationStarted = Signal(int)  # request id
    prefillProgress = Signal(PrefillProgress)
    tokensReady = Signal(TokensReady)
    generationFinished = Signal(GenerationFinished)
    generationFailed = Signal(WorkerFailure)  # with its request id
    memoryChanged = Signal(MemoryUse)
    diskError = Signal(str)  # saving caches stopped (a full disk): told once per loaded model
    # A request's draft model could not be used (why, naming both models): told once per draft
    # model and loaded model; the reply guessed from the conversation instead.
    draftModelFailed = Signal(str)

    def __init__(
        self,
        engine_factory: EngineFactory = default_engine_factory,
        model_room: ModelRoom = available_room,
    ) -> None:
        super().__init__()
        self._factory = engine_factory
        self._queue: queue.Queue[Any] = queue.Queue()
        self._models = WorkerModels(model_room)
        self._drafts = WorkerDrafts()
        self._current: GenerationRequest | None = None
        self._saving = False  # caches may be left to save: the worker saves while idle
        self._disk_told = False
        self._last_disk_bytes = 0
        # Submitted and not yet finished, so a stop reaches a request still in the queue.
        self._pending: dict[int, GenerationRequest] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        # Created here, on the GUI thread, so what it relays runs there.
        self.relay = GuiRelay(self)
        self._thread = threading.Thread(target=self._run, name="inference-worker", daemon=True)
        self._thread.start()

    # ---- GUI-thread API -------------------------------------------------------------------
    def load_model(self, path: str | Path) -> None:
        """Make the model at `path` the main one: at once when it is held beside the main one
        (a compare loaded it), else loaded in place of every model held."""
        self._queue.put(LoadRequest(Path(path)))

    def next_request_id(self) -> int:
        """A request id no other caller of this worker has had (safe from any thread)."""
        with self._lock:
            return next(self._ids)

    def submit(self, request: GenerationRequest) -> None:
        """Queue a generation; requests run one after another, never interleaved."""
        with self._lock:
            self._pending[request.request_id] = request
        self._queue.put(request)

    def call(
        self,
        fn: Callable[[EngineLike | None], Any],
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        """Run `fn(engine)` on the worker thread with the main model's engine, then
        `on_done(result)` on the GUI thread; if `fn` or `on_done` raises, `on_error(message)`
        runs on the GUI thread instead (without an `on_error`, the failure is logged with its
        traceback)."""
        self._queue.put(EngineCall(fn, on_done, on_error))

    def call_held(
        self,
        fn: Callable[[dict[str, EngineLike]], Any],
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        """As `call`, with the engine of every model held by its model id (the main first)."""
        self.call(
            lambda _main: fn({r.model_id: r.engine for r in self._models.all()}), on_done, on_error
        )

    def call_each(self, fn: Callable[[EngineLike], Any]) -> None:
        """Run `fn(engine)` on the worker thread for every model held, the main one first:
        what concerns each model's caches (forgetting a conversation, the disk budget)."""
        self.call(lambda _main: [fn(r.engine) for r in self._models.all()])

    def set_cache_budget(self, budget_bytes: int) -> None:
        """The memory stored caches may take, shared by every model held."""
        self.call(lambda _main: self._models.set_cache_budget(budget_bytes))

    def held_models(self) -> tuple[HeldModel, ...]:
        """The models loaded now, the main one first (safe from any thread)."""
        return self._models.snapshot()

    def model_room(self) -> int:
        """Bytes model weights may take in all now, those held included (any thread)."""
        held = sum(m.weights_bytes for m in self.held_models()) + self._drafts.weights_bytes
        return self._models.room(held)

    def cancel(self, request_id: int | None = None) -> None:
        """Stop the generation `request_id` (every one when None) at once, or before it
        starts if it is still queued."""
        with self._lock:
            doomed = [r for r in self._pending.values() if request_id in (None, r.request_id)]
        for request in doomed:
            request.cancel.set()

    def is_busy(self) -> bool:
        with self._lock:
            return self._current is not None

    def is_alive(self) -> bool:
        """False once the thread has ended (after `shutdown`)."""
        return self._thread.is_alive()

    def on_worker_thread(self) -> bool:
        """Whether the caller is the worker thread itself (a job of its own), which must never
        wait for another job."""
        return threading.current_thread() is self._thread

    def shutdown(self, timeout_s: float = 2.0) -> bool:
        """Stop generation, end the thread and wait for it; True if it ended in time."""
        self.cancel()
        self._queue.put(STOP)
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    # ---- worker thread ---------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            item = self._next_item()
            if item is STOP:
                self._save_for(QUIT_SAVE_S)
                _release_thread_streams()
                return
            if isinstance(item, LoadRequest):
                self._do_load(item.path)
            elif isinstance(item, GenerationRequest):
                self._do_generate(item)
            elif isinstance(item, EngineCall):
                self._do_call(item)
            self._saving = bool(self._models.all())

    def _next_item(self) -> Any:
        """The next request; while none waits and caches are left to save, save a slice."""
        while self._saving:
            try:
                return self._queue.get_nowait()
            except queue.Empty:
                self._save_for(IDLE_SAVE_S)
        return self._queue.get()

    def _save_for(self, seconds: float) -> None:
        """Save caches for about `seconds`: the main model's first, then those held beside."""
        held = self._models.all()
        self._saving = False
        for resident in held:
            try:
                self._saving = resident.engine.save_pending(seconds)
            except Exception as exc:  # a bug, not a full disk (the engine reports that itself)
                _log.error("Saving caches failed", exc_info=exc)
            if self._saving:
                break
        error = next((r.engine.disk_error for r in held if r.engine.disk_error), None)
        if error is not None and not self._disk_told:
            self._disk_told = True
            self.diskError.emit(error)
        if held and not self._saving and held[0].engine.disk_bytes() != self._last_disk_bytes:
            self._emit_memory()

    def _do_load(self, path: Path, save_all: bool = False) -> Resident | WorkerFailure:
        """Make `path` the main model; returns it, or why it could not be loaded. A model held
        beside is promoted at once; any other is loaded in place of every model held, after
        saving their caches: what can be saved quickly, or all of them (`save_all`, so a
        compare's models each keep their branch caches for when the person comes back)."""
        held = self._models.find(path)
        if held is not None and held is not self._models.main:
            self._models.promote(held)
            self._main_changed(held)
            return held
        self.loadStarted.emit(str(path))
        self._release_all(save_all)

        def progress(stage: str, done: int, total: int) -> None:
            self.loadProgress.emit(LoadProgress(stage, done, total))

        loaded = self._load(path, progress)
        if isinstance(loaded, WorkerFailure):
            _log.warning("The model at %s failed to load: %s", path, loaded.message)
            self.loadFailed.emit(loaded)
            self._emit_memory()
            return loaded
        self._models.set_main(loaded)
        self._main_changed(loaded)
        return loaded

    def _load(
        self, path: Path, progress: Callable[[str, int, int], None]
    ) -> Resident | WorkerFailure:
        try:
            engine, info = self._factory(path, progress)
        except Exception as exc:  # every failure must reach the person, and the worker lives on
            return failure_of(exc)
        return Resident(path, engine, info)

    def _release_all(self, save_all: bool) -> None:
        if save_all:
            save_caches(self._models.all())
        else:
            self._save_for(QUIT_SAVE_S)  # the models being replaced: keep what can be kept
        self._models.release_all()
        self._drafts.reset()
        self._disk_told = False

    def _main_changed(self, resident: Resident) -> None:
        self._drafts.reset()  # a draft model is checked against its main model
        self._drafts.follow(resident.info.cpu_float32)
        self.modelLoaded.emit(resident.info)
        self._emit_memory()

    def _resident_for(self, request: GenerationRequest) -> Resident | None:
        """The model `request` runs on, loaded first when it names one not held; None when
        there is none (the failure is reported) or the request was stopped before its model
        loaded (it is reported as stopped)."""
        wanted = request.model
        if wanted is None:
            if self._models.main is None:
                self._fail(request, FailureKind.NO_MODEL, "No model is loaded yet.")
            return self._models.main
        held = self._models.find(wanted.path)
        if held is not None:
            return held
        if request.cancel.is_set():  # never load a model for a request already stopped
            self.generationFinished.emit(
                GenerationFinished(request.request_id, "", "cancelled", {})
            )
            return None
        beside = bool(wanted.together) and self._models.main is not None
        if beside:  # what an earlier compare left beside the main model makes room first
            save_caches(self._models.release_beside(wanted.together))
        # Beside only while the room says so now, whatever was planned: never out of memory.
        beside = beside and self._models.fits(wanted.weights_bytes, self._drafts.weights_bytes)
        self.modelPreparing.emit(ModelPreparing(request.request_id, str(wanted.path), beside))
        if beside:
            loaded = self._load(wanted.path, lambda _stage, _done, _total: None)
            if isinstance(loaded, Resident):
                self._models.add_beside(loaded)
                self._emit_memory()
        else:
            loaded = self._do_load(wanted.path, save_all=True)
        if isinstance(loaded, WorkerFailure):
            why = f"{wanted.path.name} could not be loaded: {loaded.message}"
            self._fail(request, loaded.kind, why)
            return None
        return loaded

    def _fail(self, request: GenerationRequest, kind: FailureKind, message: str) -> None:
        self.generationFailed.emit(WorkerFailure(kind, message, request.request_id))

    def _do_generate(self, request: GenerationRequest) -> None:
        with self._lock:
            self._current = request
        try:
            resident = self._resident_for(request)
            if resident is None:
                return
            if request.model is not None:
                # Only the worker knows which switches this model's template reads.
                switches = template_kwargs(resident.info, request.params)
                request = dataclasses.replace(request, template_kwargs=switches)
            run_generation(resident, request, self, self._drafts)
            self._models.used(resident)
        finally:
            with self._lock:
                self._current = None
                self._pending.pop(request.request_id, None)
            self._emit_memory()

    def _do_call(self, call: EngineCall) -> None:
        main = self._models.main
        try:
            value = call.fn(None if main is None else main.engine)
        except Exception as exc:
            self.relay.post(call.report, exc)
            return
        if call.on_done is not None:
            self.relay.post(call.finish, value)
        self._emit_memory()

    def _emit_memory(self) -> None:
        held = self._models.all()
        first = held[0].engine if held else None
        self._last_disk_bytes = first.disk_bytes() if first is not None else 0
        self.memoryChanged.emit(
            MemoryUse(
                cache_bytes=sum(r.engine.cache_bytes() for r in held),
                disk_bytes=self._last_disk_bytes,
                disk_budget_bytes=first.disk_budget_bytes if first is not None else 0,
                weights_bytes=self._models.weights_bytes() + self._drafts.weights_bytes,
            )
        )


def _release_thread_streams() -> None:
    """Destroy this thread's MLX streams before it ends. Left to thread-local teardown they race
    the interpreter's shutdown and abort the process ("terminate called without an active
    exception"; mlx PRs #3395 and #4110)."""
    if "mlx.core" in sys.modules:
        import mlx.core as mx

        mx.clear_streams()
