"""What the inference worker's queue carries: a generation request, a model to load, a function
to run with the engine, and the mark that ends the thread.

`EngineCall`'s callbacks run on the GUI thread (the worker posts them through its relay);
failures nobody handles are logged, never dropped.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.generation.worker_errors import failure_of

if TYPE_CHECKING:
    from app.generation.worker_engine import EngineLike

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RequestModel:
    """The model a request runs on, whichever is the worker's main one (a compare's answers):
    its folder, the memory its weights take once loaded, and the folders it may be held beside
    (the compare's models that fit together; none: it replaces the models held)."""

    path: Path
    weights_bytes: int
    together: tuple[Path, ...] = ()


@dataclass(frozen=True)
class ModelPreparing:
    """The worker loads `path` for request `request_id`: `beside` the models it holds, or in
    their place (they were unloaded first, their caches saved)."""

    request_id: int
    path: str
    beside: bool


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
    # OpenAI-style tool schemas offered to the model (None: none); its calls come back in the
    # finished payload's "tool_calls".
    tools: list[dict] | None = None
    # Run on this model rather than the main one, loading it first if the worker does not hold
    # it; its template switches then come from `params` and its own template.
    model: RequestModel | None = None


@dataclass
class LoadRequest:
    path: Path


@dataclass
class EngineCall:
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
            self.on_error(failure_of(exc).message)


STOP = object()  # the thread saves what it quickly can and ends
