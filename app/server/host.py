"""The window's local server: started, restarted and stopped on the app's asyncio loop (the Qt
loop, through qasync) as the person changes Preferences › Server.

asyncio and aiohttp load only when they are first needed: the window's start-up never waits for
them.
Changes run one after another: a new setting waits for the previous server to close its port.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.generation.knowledge_retrieval import KnowledgeBase
from app.generation.worker import InferenceWorker
from app.generation.worker_events import ModelLoaded
from app.server.config import ServerConfig, ServerConfigError

if TYPE_CHECKING:
    import asyncio

    from app.server.openai_server import LocalServer

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ServerState:
    """The local server's base URL while it serves, else None; `message`, why it is not
    serving ("" when it was only turned off)."""

    url: str | None
    message: str = ""


class ServerHost(QObject):
    stateChanged = Signal(ServerState)

    def __init__(
        self,
        worker: InferenceWorker,
        model_info: Callable[[], ModelLoaded | None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._worker = worker
        self._model_info = model_info
        self._server: LocalServer | None = None
        self._last: asyncio.Future[None] | None = None
        self._knowledge: Callable[[], KnowledgeBase | None] = lambda: None
        self._knowledge_budget: Callable[[], int] = lambda: 0

    def set_knowledge(
        self, knowledge: Callable[[], KnowledgeBase | None], budget: Callable[[], int]
    ) -> None:
        """The knowledge index requests may name (`knowledge()`, None while there is none) and
        the tokens a turn's excerpts may take (`budget()`, 0: a quarter of the context)."""
        self._knowledge = knowledge
        self._knowledge_budget = budget

    @property
    def url(self) -> str | None:
        return self._server.url if self._server is not None else None

    def apply(self, config: ServerConfig | None) -> asyncio.Future[None]:
        """Serve with `config`, or stop when None; on the current thread's asyncio loop. The
        returned future ends once the change is done (its outcome reaches `stateChanged`)."""
        import asyncio

        previous = self._last
        self._last = asyncio.ensure_future(self._switch(previous, config))
        return self._last

    async def settled(self) -> None:
        """Wait until the last change asked of `apply` is done."""
        import asyncio

        if self._last is not None:
            await asyncio.gather(self._last, return_exceptions=True)

    async def _switch(
        self, previous: asyncio.Future[None] | None, config: ServerConfig | None
    ) -> None:
        import asyncio

        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)
        await self._stop()
        if config is None:
            self.stateChanged.emit(ServerState(None))
            return
        from app.server.openai_server import LocalServer
        from app.server.served_requests import ServedGenerations

        generations = ServedGenerations(
            self._worker,
            self._model_info(),
            knowledge=self._knowledge(),
            knowledge_budget=self._knowledge_budget,
        )
        try:
            server = LocalServer(generations, config)
            url = await server.start()
        except (ServerConfigError, OSError) as exc:
            generations.close()
            message = f"The local server could not start on {config.host}:{config.port}: {exc}"
            _log.warning("%s", message)
            self.stateChanged.emit(ServerState(None, message))
            return
        self._server = server
        self.stateChanged.emit(ServerState(url))

    async def _stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            await server.stop()
            server.generations.close()
