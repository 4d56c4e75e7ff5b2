"""The inference worker: one long-lived thread that owns the model, the engine and every MLX object.

The GUI thread talks to it through a queue and hears back through Qt signals that carry plain
Python values only (never mx.arrays; structured payloads are `Signal(object)`
because a `Signal(dict)` can arrive empty). MLX streams and lazy arrays belong to the thread that
made them, so the model is loaded here too, and `inference`/`mlx` are imported lazily on this
thread: importing `app` must not load MLX (the window appears before the model loads).

Cancel is a `threading.Event` set directly from the GUI thread: a queued slot would run only after
the generation had ended.

`call`'s callbacks come back on the GUI thread through one `GuiRelay`, so the code that asked for
the work may write its own state from them. Failures nobody handles are logged, never dropped.
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Signal

from app.gui_relay import GuiRelay

if TYPE_CHECKING:
    from collections.abc import Sequence

# The GUI sees at most this many token updates a second, however fast tokens arrive.
MAX_UPDATES_PER_SECOND = 60
_UPDATE_INTERVAL_S = 1.0 / MAX_UPDATES_PER_SECOND

_log = logging.getLogger(__name__)


class EngineLike(Protocol):
    """What the worker needs of an engine; `inference.Engine` is the real one."""

    context_length: int

    def generate(self, messages: Sequence[dict], params: Any, **kwargs: Any) -> Any: ...
    def count_prompt_tokens(self, messages: Sequence[dict]) -> int: ...
    def cache_bytes(self) -> int: ...
    def clear_cache(self) -> None: ...
    def forget(self, conversation_id: object) -> None: ...


EngineFactory = Callable[[Path, Callable[[str, int, int], None]], tuple[EngineLike, dict]]


def default_engine_factory(
    path: Path, progress: Callable[[str, int, int], None]
) -> tuple[EngineLike, dict]:
    """Load an MLX model folder and build an Engine (runs on the worker thread)."""
    from inference import Engine, load_model

    progress("Loading weights", 0, 1)
    model = load_model(path)
    progress("Loading weights", 1, 1)
    engine = Engine(model)
    info = {
        "model_id": model.model_id,
        "model_type": model.model_type,
        "path": str(path),
        "context_length": engine.context_length,
        "weights_bytes": model.weights_bytes,
    }
    return engine, info


@dataclass
class GenerationRequest:
    request_id: int
    messages: list[dict]
    params: dict
    conversation_id: str | int | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    continue_reply: bool = False  # go on writing the last message, a partial reply


@dataclass
class _Load:
    path: Path


@dataclass
class _Call:
    """Run a function on the worker thread with the engine (import, count tokens, budget...)."""

    fn: Callable[[EngineLike | None], Any]
    on_done: Callable[[Any], None] | None
    on_error: Callable[[str], None] | None

    def finish(self, value: Any) -> None:
        """On the GUI thread: hand `fn`'s result on."""
        try:
            if self.on_done is not None:
                self.on_done(value)
        except Exception as exc:
            self.report(exc)

    def report(self, exc: Exception) -> None:
        """On the GUI thread: tell `on_error` why, or else log it with its traceback."""
        if self.on_error is None:
            _log.error("A background task failed", exc_info=exc)
        else:
            self.on_error(_message(exc))


_STOP = object()


class _TokenCoalescer:
    """Collects text deltas and hands them on at most MAX_UPDATES_PER_SECOND times a second."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self._emit = emit
        self._pending: list[str] = []
        self._last = 0.0

    def add(self, delta: str) -> None:
        self._pending.append(delta)
        now = time.monotonic()
        if now - self._last >= _UPDATE_INTERVAL_S:
            self.flush(now)

    def flush(self, now: float | None = None) -> None:
        if self._pending:
            self._emit("".join(self._pending))
            self._pending.clear()
        self._last = time.monotonic() if now is None else now


class InferenceWorker(QObject):
    """Owns the inference thread. Create it on the GUI thread; call its methods from there."""

    loadStarted = Signal(str)  # model path
    loadProgress = Signal(object)  # {"stage": str, "done": int, "total": int}
    # {"model_id", "model_type", "path", "context_length", "weights_bytes"}
    modelLoaded = Signal(object)
    loadFailed = Signal(str)  # message for the person
    generationStarted = Signal(int)  # request id
    prefillProgress = Signal(object)  # {"request_id", "done", "total"}
    tokensReady = Signal(object)  # {"request_id", "text": delta since the last update}
    generationFinished = Signal(object)  # {"request_id", "text", "finish_reason", "stats"}
    generationFailed = Signal(object)  # {"request_id", "message"}
    memoryChanged = Signal(object)  # {"cache_bytes", "weights_bytes"}

    def __init__(self, engine_factory: EngineFactory = default_engine_factory) -> None:
        super().__init__()
        self._factory = engine_factory
        self._queue: queue.Queue[Any] = queue.Queue()
        self._engine: EngineLike | None = None
        self._weights_bytes = 0
        self._current: GenerationRequest | None = None
        # Submitted and not yet finished, so a stop reaches a request still in the queue.
        self._pending: dict[int, GenerationRequest] = {}
        self._lock = threading.Lock()
        # Created here, on the GUI thread, so what it relays runs there.
        self.relay = GuiRelay(self)
        self._thread = threading.Thread(target=self._run, name="inference-worker", daemon=True)
        self._thread.start()

    # ---- GUI-thread API -------------------------------------------------------------------
    def load_model(self, path: str | Path) -> None:
        self._queue.put(_Load(Path(path)))

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
        self._queue.put(_Call(fn, on_done, on_error))

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
        self._queue.put(_STOP)
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    # ---- worker thread ---------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                _release_thread_streams()
                return
            if isinstance(item, _Load):
                self._do_load(item.path)
            elif isinstance(item, GenerationRequest):
                self._do_generate(item)
            elif isinstance(item, _Call):
                self._do_call(item)

    def _do_load(self, path: Path) -> None:
        self.loadStarted.emit(str(path))
        self._engine = None

        def progress(stage: str, done: int, total: int) -> None:
            self.loadProgress.emit({"stage": stage, "done": done, "total": total})

        try:
            engine, info = self._factory(path, progress)
        except Exception as exc:  # every failure must reach the person, and the worker lives on
            message = _message(exc)
            _log.warning("The model at %s failed to load: %s", path, message)
            self.loadFailed.emit(message)
            return
        self._engine = engine
        self._weights_bytes = int(info.get("weights_bytes", 0))
        self.modelLoaded.emit(info)
        self._emit_memory()

    def _do_generate(self, request: GenerationRequest) -> None:
        with self._lock:
            self._current = request
        try:
            if self._engine is None:
                self.generationFailed.emit(
                    {"request_id": request.request_id, "message": "No model is loaded yet."}
                )
                return
            self.generationStarted.emit(request.request_id)
            rid = request.request_id
            coalescer = _TokenCoalescer(
                lambda text: self.tokensReady.emit({"request_id": rid, "text": text})
            )

            def on_progress(done: int, total: int) -> None:
                self.prefillProgress.emit({"request_id": rid, "done": done, "total": total})

            try:
                result = self._engine.generate(
                    request.messages,
                    _sampling_params(request.params),
                    conversation_id=request.conversation_id,
                    on_token=coalescer.add,
                    on_progress=on_progress,
                    cancel=request.cancel,
                    # Only when asked, so engines without the option still serve replies.
                    **({"continue_reply": True} if request.continue_reply else {}),
                )
            except Exception as exc:
                coalescer.flush()
                self.generationFailed.emit({"request_id": rid, "message": _message(exc)})
                return
            coalescer.flush()
            self.generationFinished.emit(
                {
                    "request_id": rid,
                    "text": result.text,
                    "finish_reason": result.finish_reason,
                    "stats": _plain_stats(result.stats),
                }
            )
        finally:
            with self._lock:
                self._current = None
                self._pending.pop(request.request_id, None)
            self._emit_memory()

    def _do_call(self, call: _Call) -> None:
        try:
            value = call.fn(self._engine)
        except Exception as exc:
            self.relay.post(call.report, exc)
            return
        if call.on_done is not None:
            self.relay.post(call.finish, value)
        self._emit_memory()

    def _emit_memory(self) -> None:
        cache = self._engine.cache_bytes() if self._engine is not None else 0
        self.memoryChanged.emit({"cache_bytes": cache, "weights_bytes": self._weights_bytes})


def _release_thread_streams() -> None:
    """Destroy this thread's MLX streams before it ends. Left to thread-local teardown they race
    the interpreter's shutdown and abort the process ("terminate called without an active
    exception"; mlx PRs #3395 and #4110)."""
    if "mlx.core" in sys.modules:
        import mlx.core as mx

        mx.clear_streams()


def _sampling_params(params: dict) -> Any:
    """Plain dict from the store -> the engine's SamplingParams (imported on this thread)."""
    from inference import SamplingParams

    known = set(SamplingParams.__dataclass_fields__)
    return SamplingParams(**{k: v for k, v in params.items() if k in known})


def _plain_stats(stats: Any) -> dict:
    if dataclasses.is_dataclass(stats) and not isinstance(stats, type):
        return dataclasses.asdict(stats)
    return dict(stats)


def _message(exc: BaseException) -> str:
    """A message for the person: the exception's own text, or its type when it has none."""
    text = str(exc).strip()
    if not text:
        text = type(exc).__name__
    if not _is_expected(exc):
        _log.error("Unexpected error (the person is told: %s)", text, exc_info=exc)
    return text


def _is_expected(exc: BaseException) -> bool:
    """An InferenceError says what went wrong in its message; anything else is a bug to log.
    Looked up, not imported: this also runs on the GUI thread, which must not load MLX, and an
    InferenceError can only exist once the worker has imported `inference`."""
    errors = sys.modules.get("inference.errors")
    return errors is not None and isinstance(exc, errors.InferenceError)
