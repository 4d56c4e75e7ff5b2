"""Replies from a remote server, delivered like the inference worker's.

`RemoteBackend` has the worker's generation signals with the same payloads, and its `submit` /
`cancel`, so `ReplyGeneration` streams a remote reply into the store exactly as a local one (see
`app.generation.reply_generation.ReplyBackend`). Each request runs as an asyncio task on the loop
(in the app the qasync loop, which is the Qt loop: its signals are emitted on the GUI thread).

A server that dies after the reply began fails it as `FailureKind.INTERRUPTED`: its text so
far is kept and marked as such, with the reason.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal

from app.async_tasks import NO_LOOP, spawn
from app.generation.token_coalescer import TokenCoalescer
from app.generation.worker_errors import FailureKind, WorkerFailure
from app.generation.worker_events import GenerationFinished, PrefillProgress, TokensReady
from app.generation.worker_requests import GenerationRequest
from app.remote.connections import Connections, ConnectionSettingsError, parse_remote
from app.remote.errors import RemoteError

if TYPE_CHECKING:
    from app.remote.client import ChatResult

_log = logging.getLogger(__name__)

# A remote prompt's size is unknown until its usage arrives: a total of -1 says "waiting for the
# first token" without a share done.
WAITING = -1


class RemoteBackend(QObject):
    # Done 0 of WAITING when sent, 1 of 1 at the first token.
    prefillProgress = Signal(PrefillProgress)
    tokensReady = Signal(TokensReady)
    generationFinished = Signal(GenerationFinished)
    generationFailed = Signal(WorkerFailure)  # INTERRUPTED, REFUSED or a BUG

    def __init__(self, connections: Connections, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.connections = connections
        self._tasks: dict[int, asyncio.Task[None]] = {}

    def submit(self, request: GenerationRequest) -> None:
        """Start the request on the asyncio loop; it reports through the signals (never from
        inside this call)."""
        rid = request.request_id
        task = spawn(self._run(request))
        if task is None:
            failure = WorkerFailure(FailureKind.REFUSED, NO_LOOP, rid)
            QTimer.singleShot(0, self, partial(self.generationFailed.emit, failure))
            return
        self._tasks[rid] = task
        task.add_done_callback(lambda _task: self._tasks.pop(rid, None))

    def cancel(self, request_id: int | None = None) -> None:
        """Stop the request (every one when None): its connection is closed, the text so far
        is reported as finished with the reason "cancelled"."""
        for rid, task in list(self._tasks.items()):
            if request_id in (None, rid):
                task.cancel()

    async def _run(self, request: GenerationRequest) -> None:
        rid = request.request_id
        parts: list[str] = []
        # The tool the reply is calling, told with every update from its first piece on, as
        # the worker tells a local reply's (the window shows "Calling …" instead of more text).
        calling: str | None = None
        coalescer = TokenCoalescer(
            lambda text: self.tokensReady.emit(TokensReady(rid, text, calling=calling))
        )

        def first_output() -> None:
            if not parts and calling is None:  # the wait is over
                self.prefillProgress.emit(PrefillProgress(rid, 1, 1))

        def on_text(text: str) -> None:
            first_output()
            parts.append(text)
            coalescer.add(text)

        def on_call(name: str) -> None:
            nonlocal calling
            first_output()
            if name != calling:
                coalescer.flush()  # the text before the call goes out as text
                calling = name
                self.tokensReady.emit(TokensReady(rid, "", calling=name))

        self.prefillProgress.emit(PrefillProgress(rid, 0, WAITING))
        try:
            result = await self._stream(request, on_text, on_call)
        except asyncio.CancelledError:
            coalescer.flush()
            self.generationFinished.emit(GenerationFinished(rid, "".join(parts), "cancelled", {}))
            return
        except (RemoteError, ConnectionSettingsError) as exc:
            coalescer.flush()
            interrupted = isinstance(exc, RemoteError) and exc.interrupted
            kind = FailureKind.INTERRUPTED if interrupted else FailureKind.REFUSED
            _log.warning("A remote reply failed (%s): %s", kind.name.lower(), exc)
            self.generationFailed.emit(WorkerFailure(kind, str(exc), rid))
            return
        except Exception as exc:  # a bug here must still end the reply, its text kept
            coalescer.flush()
            _log.error("A remote reply failed", exc_info=exc)
            message = f"The remote reply failed: {exc!r}"
            self.generationFailed.emit(WorkerFailure(FailureKind.BUG, message, rid))
            return
        coalescer.flush()
        self.generationFinished.emit(
            GenerationFinished(
                rid, result.text, result.finish_reason, result.stats, tool_calls=result.tool_calls
            )
        )

    async def _stream(
        self,
        request: GenerationRequest,
        on_text: Callable[[str], None],
        on_call: Callable[[str], None],
    ) -> ChatResult:
        """Stream the reply from the conversation's server; raises ConnectionSettingsError or
        RemoteError (whose `interrupted` says whether the reply had begun)."""
        # The openai package takes seconds to import: on first use, on a thread, so neither the
        # window's start nor its event loop waits for it.
        client = await asyncio.get_running_loop().run_in_executor(
            None, importlib.import_module, "app.remote.client"
        )
        target = parse_remote(request.model_id or "")
        connection = self.connections.get(target.connection)
        if connection is None:
            raise ConnectionSettingsError(
                f"There is no connection named “{target.connection}” any more: choose "
                "another model in the conversation's settings."
            )
        return await client.stream_chat(
            connection.base_url,
            self.connections.api_key(connection.name),
            target.model,
            request.messages,
            request.params,
            on_text,
            request.tools,
            on_call,
        )
