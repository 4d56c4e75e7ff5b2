"""The inference worker: one long-lived thread that owns the model, the engine and every MLX object.

The GUI thread talks to it through a queue and hears back through Qt signals that carry plain
Python values only (never mx.arrays; structured payloads are `Signal(object)` because a
`Signal(dict)` can arrive empty), failures as a `WorkerFailure` whose `kind` says what went wrong
(app.generation.worker_errors). MLX streams and lazy arrays belong to the thread that
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

import itertools
import logging
import queue
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.generation.gui_relay import GuiRelay
from app.generation.worker_drafts import WorkerDrafts
from app.generation.worker_engine import EngineFactory, EngineLike, default_engine_factory
from app.generation.worker_errors import FailureKind, WorkerFailure, failure_of
from app.generation.worker_generation import run_generation
from app.generation.worker_requests import STOP, EngineCall, GenerationRequest, LoadRequest

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
    """Owns the inference thread. Create it on the GUI thread; call its methods from there."""

    loadStarted = Signal(str)  # model path
    loadProgress = Signal(object)  # {"stage": str, "done": int, "total": int}
    # {"model_id", "model_type", "path", "context_length", "weights_bytes"}
    modelLoaded = Signal(object)
    loadFailed = Signal(object)  # a WorkerFailure: LOAD_FAILED, or a BUG
    generationStarted = Signal(int)  # request id
    prefillProgress = Signal(object)  # {"request_id", "done", "total"}
    # {"request_id", "text": answer delta, "reasoning": reasoning delta, "thinking": bool,
    #  "calling": the tool a reply offered tools is calling ("" while its name is incomplete),
    #  else None; "hidden": how many of the answer's last characters must not show (a call's
    #  markup, or what may become a marker)}
    tokensReady = Signal(object)
    # {"request_id", "text": the answer, "reasoning", "finish_reason", "stats",
    #  "dropped_messages", "tool_calls": [{"id", "name", "arguments"}], "provenance": the
    #  reply's (app.store.provenance) or None}; the stats hold
    #  "reasoning_tokens" and "reasoning_s" when the reply reasoned
    generationFinished = Signal(object)
    # A WorkerFailure with its request id: CONTEXT_FULL, INVALID_REQUEST, NO_MODEL, a BUG...
    generationFailed = Signal(object)
    # {"cache_bytes", "disk_bytes", "disk_budget_bytes", "weights_bytes"}
    memoryChanged = Signal(object)
    diskError = Signal(str)  # saving caches stopped (a full disk): told once per loaded model
    # A request's draft model could not be used (why, naming both models): told once per draft
    # model and loaded model; the reply guessed from the conversation instead.
    draftModelFailed = Signal(str)

    def __init__(self, engine_factory: EngineFactory = default_engine_factory) -> None:
        super().__init__()
        self._factory = engine_factory
        self._queue: queue.Queue[Any] = queue.Queue()
        self._engine: EngineLike | None = None
        self._model_id = ""
        self._tool_format: str | None = None  # the loaded model's tool-call format
        # What names the loaded model in a reply's provenance (inference.loading.identity).
        self._identity: dict[str, Any] | None = None
        self._weights_bytes = 0
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
        """Run `fn(engine)` on the worker thread, then `on_done(result)` on the GUI thread; if
        `fn` or `on_done` raises, `on_error(message)` runs on the GUI thread instead (without an
        `on_error`, the failure is logged with its traceback)."""
        self._queue.put(EngineCall(fn, on_done, on_error))

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
            self._saving = self._engine is not None

    def _next_item(self) -> Any:
        """The next request; while none waits and caches are left to save, save a slice."""
        while self._saving:
            try:
                return self._queue.get_nowait()
            except queue.Empty:
                self._save_for(IDLE_SAVE_S)
        return self._queue.get()

    def _save_for(self, seconds: float) -> None:
        engine = self._engine
        if engine is None:
            self._saving = False
            return
        try:
            self._saving = engine.save_pending(seconds)
        except Exception as exc:  # a bug, not a full disk (the engine reports that itself)
            _log.error("Saving caches failed", exc_info=exc)
            self._saving = False
        error = engine.disk_error
        if error is not None and not self._disk_told:
            self._disk_told = True
            self.diskError.emit(error)
        if not self._saving and engine.disk_bytes() != self._last_disk_bytes:
            self._emit_memory()

    def _do_load(self, path: Path) -> None:
        self.loadStarted.emit(str(path))
        self._save_for(QUIT_SAVE_S)  # the model being replaced: keep what can be kept quickly
        self._engine = None
        self._drafts.reset()
        self._disk_told = False

        def progress(stage: str, done: int, total: int) -> None:
            self.loadProgress.emit({"stage": stage, "done": done, "total": total})

        try:
            engine, info = self._factory(path, progress)
        except Exception as exc:  # every failure must reach the person, and the worker lives on
            failure = failure_of(exc)
            _log.warning("The model at %s failed to load: %s", path, failure.message)
            self.loadFailed.emit(failure)
            return
        self._engine = engine
        self._model_id = str(info.get("model_id") or path.name)
        self._tool_format = info.get("tool_format")
        self._identity = info.get("identity")
        self._weights_bytes = int(info.get("weights_bytes", 0))
        self._drafts.follow(str(info.get("cpu_float32") or "auto"))
        self.modelLoaded.emit(info)
        self._emit_memory()

    def _do_generate(self, request: GenerationRequest) -> None:
        with self._lock:
            self._current = request
        try:
            if self._engine is None:
                self.generationFailed.emit(WorkerFailure(
                    FailureKind.NO_MODEL, "No model is loaded yet.", request.request_id))
                return
            run_generation(
                self._engine, request, self, self._drafts, self._model_id, self._tool_format,
                self._identity,
            )
        finally:
            with self._lock:
                self._current = None
                self._pending.pop(request.request_id, None)
            self._emit_memory()

    def _do_call(self, call: EngineCall) -> None:
        try:
            value = call.fn(self._engine)
        except Exception as exc:
            self.relay.post(call.report, exc)
            return
        if call.on_done is not None:
            self.relay.post(call.finish, value)
        self._emit_memory()

    def _emit_memory(self) -> None:
        engine = self._engine
        cache = engine.cache_bytes() if engine is not None else 0
        self._last_disk_bytes = engine.disk_bytes() if engine is not None else 0
        self.memoryChanged.emit(
            {
                "cache_bytes": cache,
                "disk_bytes": self._last_disk_bytes,
                "disk_budget_bytes": engine.disk_budget_bytes if engine is not None else 0,
                "weights_bytes": self._weights_bytes + self._drafts.weights_bytes,
            }
        )


def _release_thread_streams() -> None:
    """Destroy this thread's MLX streams before it ends. Left to thread-local teardown they race
    the interpreter's shutdown and abort the process ("terminate called without an active
    exception"; mlx PRs #3395 and #4110)."""
    if "mlx.core" in sys.modules:
        import mlx.core as mx

        mx.clear_streams()
