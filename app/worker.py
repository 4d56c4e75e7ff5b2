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

Saving caches to disk happens only while the queue is empty, in slices of `IDLE_SAVE_S`, so a new
request waits at most one small write and tokens are never delayed by it. Quitting saves for at
most `QUIT_SAVE_S` more: what is still unsaved then only costs a recompute after the restart.
"""

from __future__ import annotations

import dataclasses
import itertools
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
from app.worker_drafts import WorkerDrafts

if TYPE_CHECKING:
    from collections.abc import Sequence

# The GUI sees at most this many token updates a second, however fast tokens arrive.
MAX_UPDATES_PER_SECOND = 60
_UPDATE_INTERVAL_S = 1.0 / MAX_UPDATES_PER_SECOND
# Saving caches in idle time: one slice between looks at the queue, and the most spent at quit.
IDLE_SAVE_S = 0.05
QUIT_SAVE_S = 1.0

_log = logging.getLogger(__name__)


class EngineLike(Protocol):
    """What the worker needs of an engine; `inference.Engine` is the real one."""

    context_length: int
    disk_budget_bytes: int

    def generate(self, messages: Sequence[dict], params: Any, **kwargs: Any) -> Any: ...
    def complete(self, prompt: str | Sequence[int], params: Any, **kwargs: Any) -> Any: ...
    def count_prompt_tokens(
        self, messages: Sequence[dict], template_kwargs: dict | None = None
    ) -> int: ...
    def cache_bytes(self) -> int: ...
    def disk_bytes(self) -> int: ...
    def clear_cache(self) -> None: ...
    def forget(self, conversation_id: object, keep_saved: bool = False) -> None: ...
    def save_pending(self, seconds: float) -> bool: ...
    def clear_saved_caches(self) -> None: ...
    def set_draft_model(self, draft: Any) -> None: ...

    @property
    def disk_error(self) -> str | None: ...


EngineFactory = Callable[[Path, Callable[[str, int, int], None]], tuple[EngineLike, dict]]


def default_engine_factory(
    path: Path,
    progress: Callable[[str, int, int], None],
    cache_dir: Path | None = None,
    cpu_float32: Callable[[], str] | None = None,
) -> tuple[EngineLike, dict]:
    """Load an MLX model folder and build an Engine (runs on the worker thread); with
    `cache_dir`, its caches are saved there and found again after a restart. `cpu_float32`
    reads the preference for float32 weights on the CPU at each load ("auto" without it)."""
    from inference import Engine, load_model
    from inference.cpu.fast_blas import in_use, outcome, report_once
    from inference.reasoning import ReasoningFormat
    from inference.template_switches import template_switches

    progress("Loading weights", 0, 1)
    model = load_model(path, cpu_float32() if cpu_float32 else "auto")
    progress("Loading weights", 1, 1)
    report_once(_log)
    engine = Engine(model, cache_dir=cache_dir)
    info = {
        "model_id": model.model_id,
        "model_type": model.model_type,
        "path": str(path),
        "context_length": engine.context_length,
        "weights_bytes": model.weights_bytes,
        "weights_form": model.weights_form,
        "blas": outcome().describe(),
        "blas_in_use": in_use(),
        "reasons": ReasoningFormat.of(model.tokenizer) is not None,
        **template_switches(model.tokenizer.chat_template).as_info(),
    }
    return engine, info


@dataclass
class GenerationRequest:
    """One generation. `request_id` comes from `InferenceWorker.next_request_id`, so the
    window's and the local server's requests never share an id (their tokens never cross).
    `prompt`, when given, is a raw completion prompt (text or token ids) fed without the chat
    template; `messages` is then ignored."""

    request_id: int
    messages: list[dict]
    params: dict
    conversation_id: str | int | None = None
    # The model the reply is for: a remote backend routes on it; the worker uses its own.
    model_id: str | None = None
    # Chat-template switches (`enable_thinking`, `reasoning_effort`) the chat has set.
    template_kwargs: dict = field(default_factory=dict)
    cancel: threading.Event = field(default_factory=threading.Event)
    prompt: str | list[int] | None = None
    continue_reply: bool = False  # go on writing the last message, a partial reply
    # The folder of a model that guesses ahead for the main one (params' speculation "draft").
    draft_model: Path | None = None


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


class TokenCoalescer:
    """Collects text deltas — one stream, or several side by side (a reply's reasoning and its
    answer) — and hands them on at most MAX_UPDATES_PER_SECOND times a second, as
    `emit(*joined)`, one joined string per stream."""

    def __init__(self, emit: Callable[..., None]) -> None:
        self._emit = emit
        self._pending: list[tuple[str, ...]] = []
        self._last = 0.0

    def add(self, *deltas: str) -> None:
        self._pending.append(deltas)
        now = time.monotonic()
        if now - self._last >= _UPDATE_INTERVAL_S:
            self.flush(now)

    def flush(self, now: float | None = None) -> None:
        joined = ["".join(stream) for stream in zip(*self._pending, strict=True)]
        if any(joined):
            self._emit(*joined)
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
    # {"request_id", "text": answer delta, "reasoning": reasoning delta, "thinking": bool}
    tokensReady = Signal(object)
    # {"request_id", "text": the answer, "reasoning", "finish_reason", "stats",
    #  "dropped_messages"}; the stats hold "reasoning_tokens" and "reasoning_s" when the reply
    #  reasoned
    generationFinished = Signal(object)
    # {"request_id", "message", "context_full": the chat outgrew the context (policy "stop"),
    #  "invalid_request": the request itself was at fault}
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
        self._queue.put(_Load(Path(path)))

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
            item = self._next_item()
            if item is _STOP:
                self._save_for(QUIT_SAVE_S)
                _release_thread_streams()
                return
            if isinstance(item, _Load):
                self._do_load(item.path)
            elif isinstance(item, GenerationRequest):
                self._do_generate(item)
            elif isinstance(item, _Call):
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
            message = _message(exc)
            _log.warning("The model at %s failed to load: %s", path, message)
            self.loadFailed.emit(message)
            return
        self._engine = engine
        self._model_id = str(info.get("model_id") or path.name)
        self._weights_bytes = int(info.get("weights_bytes", 0))
        self.modelLoaded.emit(info)
        self._emit_memory()

    def _do_generate(self, request: GenerationRequest) -> None:
        with self._lock:
            self._current = request
        try:
            if self._engine is None:
                self.generationFailed.emit(
                    {
                        "request_id": request.request_id,
                        "message": "No model is loaded yet.",
                        "invalid_request": False,
                    }
                )
                return
            self.generationStarted.emit(request.request_id)
            rid = request.request_id
            splitter = _reply_splitter(self._engine, request)

            def emit(reasoning: str, answer: str) -> None:
                self.tokensReady.emit(
                    {
                        "request_id": rid,
                        "text": answer,
                        "reasoning": reasoning,
                        "thinking": splitter.thinking,
                    }
                )

            coalescer = TokenCoalescer(emit)

            def on_token(delta: str) -> None:
                coalescer.add(*splitter.feed(delta))

            def on_progress(done: int, total: int) -> None:
                self.prefillProgress.emit({"request_id": rid, "done": done, "total": total})

            # A chat and a raw prompt stream, report and stop the same way.
            listeners: dict[str, Any] = {
                "conversation_id": request.conversation_id,
                "on_token": on_token,
                "on_progress": on_progress,
                "cancel": request.cancel,
            }
            try:
                params = _sampling_params(self._with_draft(self._engine, request))
                if request.prompt is None:
                    result = self._engine.generate(
                        request.messages,
                        params,
                        template_kwargs=request.template_kwargs,
                        continue_reply=request.continue_reply,
                        **fit_options(request.params),
                        **listeners,
                    )
                else:
                    result = self._engine.complete(request.prompt, params, **listeners)
            except Exception as exc:
                coalescer.add(*splitter.finish())
                coalescer.flush()
                self.generationFailed.emit(
                    {
                        "request_id": rid,
                        "message": _message(exc),
                        "context_full": _is_error(exc, "ContextOverflowError"),
                        "invalid_request": _is_invalid_request(exc),
                    }
                )
                return
            coalescer.add(*splitter.finish())
            coalescer.flush()
            stats = _plain_stats(result.stats)
            if splitter.reasoning:
                # A delta is about one token (one that completes no character shows none); a
                # reply that never left its reasoning is all reasoning, counted exactly.
                stats["reasoning_tokens"] = (
                    stats["generated_tokens"] if splitter.thinking else splitter.reasoning_deltas
                )
                stats["reasoning_s"] = splitter.reasoning_s
            self.generationFinished.emit(
                {
                    "request_id": rid,
                    "text": splitter.answer,
                    "reasoning": splitter.reasoning,
                    "finish_reason": result.finish_reason,
                    "stats": stats,
                    # Indexes into request.messages of those left out of the model's view.
                    "dropped_messages": list(result.dropped_messages),
                }
            )
        finally:
            with self._lock:
                self._current = None
                self._pending.pop(request.request_id, None)
            self._emit_memory()

    def _with_draft(self, engine: EngineLike, request: GenerationRequest) -> dict:
        """The request's params, once its draft model is set on the engine; without a usable
        one, a "draft" request guesses from the conversation (prompt lookup) instead."""
        params = request.params
        if params.get("speculation") != "draft":
            return params
        drafting, problem = self._drafts.prepare(engine, self._model_id, request.draft_model)
        if problem is not None:
            self.draftModelFailed.emit(problem)
        return params if drafting else {**params, "speculation": "prompt_lookup"}

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


def _reply_splitter(engine: EngineLike, request: GenerationRequest) -> Any:
    """Splits the reply into reasoning and answer (imported on this thread: it loads mlx-lm).
    An engine without a model tokenizer (a stand-in) gets a splitter that passes all through."""
    from inference.reasoning import reply_splitter

    model = getattr(engine, "model", None)
    tokenizer = getattr(model, "tokenizer", None)
    return reply_splitter(tokenizer, request.messages, request.template_kwargs)


def _sampling_params(params: dict) -> Any:
    """Plain dict from the store -> the engine's SamplingParams (imported on this thread)."""
    from inference import SamplingParams

    known = set(SamplingParams.__dataclass_fields__)
    return SamplingParams(**{k: v for k, v in params.items() if k in known})


def fit_options(params: dict) -> dict[str, Any]:
    """The chat's overflow policy and context length, when it has them (not sampling
    parameters), as the engine's `overflow` and `context_limit` arguments. A context length
    the engine cannot use is passed on all the same: its refusal says why."""
    options: dict[str, Any] = {}
    if params.get("overflow"):
        options["overflow"] = params["overflow"]
    if params.get("context_length") is not None:
        options["context_limit"] = params["context_length"]
    return options


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


def _is_invalid_request(exc: BaseException) -> bool:
    """A prompt or sampling settings the engine refused: the asker's fault, not the model's."""
    errors = sys.modules.get("inference.errors")
    return errors is not None and isinstance(exc, errors.PromptError | errors.SamplingError)


def _is_expected(exc: BaseException) -> bool:
    """An InferenceError says what went wrong in its message; anything else is a bug to log."""
    return _is_error(exc, "InferenceError")


def _is_error(exc: BaseException, name: str) -> bool:
    """Whether `exc` is `inference.errors.<name>`. Looked up, not imported: this also runs on
    the GUI thread, which must not load MLX, and such an error can only exist once the worker
    has imported `inference`."""
    errors = sys.modules.get("inference.errors")
    return errors is not None and isinstance(exc, getattr(errors, name))
