"""Served requests on the shared inference worker: submitted to its queue, answered on an asyncio
loop.

The worker's signals are connected directly (they run on the worker thread) and routed by
request id: each served request gets only its own events, handed to its loop with
`call_soon_threadsafe`, so this works on the window's qasync loop and on the plain asyncio loop
of `branchwise serve` alike, and a window reply and a served one never cross tokens. At most
`max_pending` served requests wait or run at once; one more is refused at once (`QueueFullError`)
rather than queued for an unknown time. Cancelling sets the request's event, which the engine
checks at every token.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt

from app.generation.knowledge_retrieval import KnowledgeBase, TurnQuery, retrieve_turn
from app.generation.worker import GenerationRequest, InferenceWorker
from app.generation.worker_errors import WorkerFailure
from app.generation.worker_events import GenerationFinished, ModelLoaded, TokensReady

if TYPE_CHECKING:
    from app.generation.worker_engine import EngineLike
    from app.knowledge.excerpts import Retrieval

# Prefixes of served requests are cached under this id, apart from the window's conversations.
SERVER_CONVERSATION = "local-server"
DEFAULT_MAX_PENDING = 8


class QueueFullError(Exception):
    """Too many served requests are already waiting or running."""


# What the worker said about one request: new text, then its end or its failure.
Event = TokensReady | GenerationFinished | WorkerFailure


class ServedRequest:
    """One submitted request; iterate `events()` on the loop that submitted it."""

    def __init__(self, request: GenerationRequest, loop: asyncio.AbstractEventLoop) -> None:
        self.request = request
        self.loop = loop
        self.done = False
        self._events: asyncio.Queue[Event] = asyncio.Queue()

    @property
    def request_id(self) -> int:
        return self.request.request_id

    def deliver(self, event: Event) -> None:
        """On the request's loop."""
        if not isinstance(event, TokensReady):
            self.done = True
        self._events.put_nowait(event)

    async def events(self) -> AsyncIterator[Event]:
        """The request's events in order, ending after "finished" or "failed"."""
        while True:
            event = await self._events.get()
            yield event
            if not isinstance(event, TokensReady):
                return


class ServedGenerations:
    """The server's side of the shared worker; create it on any thread, use it on one loop.
    `knowledge` is the knowledge index requests may name (None: none), `knowledge_budget()`
    the tokens a turn's excerpts may take (0: a quarter of the model's context)."""

    def __init__(
        self,
        worker: InferenceWorker,
        model_info: ModelLoaded | None = None,
        max_pending: int = DEFAULT_MAX_PENDING,
        knowledge: KnowledgeBase | None = None,
        knowledge_budget: Callable[[], int] = lambda: 0,
    ) -> None:
        self.worker = worker
        self.max_pending = max_pending
        self.knowledge = knowledge
        self._knowledge_budget = knowledge_budget
        self._model = model_info
        self._lock = threading.Lock()
        self._requests: dict[int, ServedRequest] = {}
        direct = Qt.ConnectionType.DirectConnection
        self._connections = [
            (worker.tokensReady, self._route),
            (worker.generationFinished, self._route),
            (worker.generationFailed, self._route),
            (worker.modelLoaded, self._on_model_loaded),
            (worker.loadStarted, self._on_load_started),
        ]
        for signal, slot in self._connections:
            signal.connect(slot, direct)

    @property
    def model(self) -> ModelLoaded | None:
        """The loaded model's facts, None while none is."""
        return self._model

    def pending(self) -> int:
        with self._lock:
            return len(self._requests)

    def submit(
        self,
        messages: list[dict] | None,
        params: dict[str, Any],
        prompt: str | list[int] | None = None,
        tools: list[dict] | None = None,
    ) -> ServedRequest:
        """Queue a chat (`messages`, offering `tools`) or a raw completion (`prompt`) on the
        worker. Call on the loop that will read its events. Raises QueueFullError when
        `max_pending` are in flight."""
        loop = asyncio.get_running_loop()
        request = GenerationRequest(
            self.worker.next_request_id(),
            messages or [],
            params,
            conversation_id=SERVER_CONVERSATION,
            prompt=prompt,
            tools=tools,
        )
        served = ServedRequest(request, loop)
        with self._lock:
            if len(self._requests) >= self.max_pending:
                raise QueueFullError(
                    f"The server is busy: {self.max_pending} requests are already waiting or "
                    "running. Try again when one has finished."
                )
            self._requests[request.request_id] = served
        self.worker.submit(request)
        return served

    async def retrieve(self, collections: Sequence[str], text: str, previous: str) -> Retrieval:
        """The excerpts for a request's last user message, retrieved on the worker as the
        window's are (its answer comes back through the loop, never a Qt event loop: `branchwise
        serve` runs none). Raises what the index raised."""
        base = self.knowledge
        if base is None:
            raise LookupError("This server has no knowledge index.")
        loop = asyncio.get_running_loop()
        found: asyncio.Future[Retrieval] = loop.create_future()
        ask = TurnQuery(tuple(collections), text, previous, self._knowledge_budget())

        def settle(result: Retrieval | BaseException) -> None:
            if found.done():
                return  # the client went away meanwhile
            if isinstance(result, BaseException):
                found.set_exception(result)
            else:
                found.set_result(result)

        def run(engine: EngineLike | None) -> None:
            try:
                result: Retrieval | BaseException = retrieve_turn(engine, base, ask)
            except Exception as exc:  # handed to the request, whose answer says it
                result = exc
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits
                loop.call_soon_threadsafe(settle, result)

        self.worker.call(run)
        return await found

    def cancel(self, served: ServedRequest) -> None:
        """Stop `served` (the engine checks at every token); harmless once it has ended."""
        if not served.done:
            self.worker.cancel(served.request_id)

    def cancel_all(self) -> None:
        with self._lock:
            doomed = list(self._requests.values())
        for served in doomed:
            self.cancel(served)

    def close(self) -> None:
        """Cancel what is in flight and stop listening to the worker."""
        self.cancel_all()
        for signal, slot in self._connections:
            signal.disconnect(slot)

    # ---- worker thread ---------------------------------------------------------------------
    def _route(self, event: Event) -> None:
        with self._lock:
            served = None if event.request_id is None else self._requests.get(event.request_id)
            if served is not None and not isinstance(event, TokensReady):
                del self._requests[served.request_id]
        if served is None:
            return  # the window's request, or one of another server
        try:
            served.loop.call_soon_threadsafe(served.deliver, event)
        except RuntimeError:
            served.request.cancel.set()  # its loop has closed: nobody is listening any more

    def _on_model_loaded(self, info: ModelLoaded) -> None:
        self._model = info

    def _on_load_started(self, _path: str) -> None:
        self._model = None
