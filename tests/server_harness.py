"""The local server on a tiny model for tests: one shared inference worker whose engine records
every result and how many tokens it produced after its cancel was set; a server on a free
loopback port; the official `openai` client pointed at it."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai
from PySide6.QtCore import Qt

from app.generation.knowledge_retrieval import KnowledgeBase
from app.generation.worker import InferenceWorker, default_engine_factory
from app.generation.worker_events import ModelLoaded
from app.server.config import ServerConfig
from app.server.openai_server import LocalServer
from app.server.served_requests import ServedGenerations

LOAD_TIMEOUT_S = 60


@dataclass
class Generated:
    finish_reason: str
    generated_tokens: int
    tokens_after_cancel: int


@dataclass
class WatchedEngine:
    """The real engine, recording each generation's end and its tokens after a cancel."""

    engine: Any
    log: list[Generated] = field(default_factory=list)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def generate(self, messages: Any, params: Any, **kwargs: Any) -> Any:
        cancel: threading.Event | None = kwargs.get("cancel")
        on_token: Callable[[str], None] = kwargs.pop("on_token")
        late = 0

        def watched(text: str) -> None:
            nonlocal late
            if cancel is not None and cancel.is_set():
                late += 1
            on_token(text)

        result = self.engine.generate(messages, params, on_token=watched, **kwargs)
        self.log.append(Generated(result.finish_reason, result.stats.generated_tokens, late))
        return result


@dataclass
class Served:
    worker: InferenceWorker
    engine: WatchedEngine
    model_info: ModelLoaded


def start_worker(model: Path) -> Served:
    """A worker with the watched engine on `model`, loaded (no Qt event loop needed)."""
    holder: list[WatchedEngine] = []

    def factory(path: Path, progress: Callable[[str, int, int], None]) -> tuple[Any, ModelLoaded]:
        engine, info = default_engine_factory(path, progress)
        holder.append(WatchedEngine(engine))
        return holder[0], info

    worker = InferenceWorker(factory)
    loaded = threading.Event()
    infos: list[ModelLoaded] = []

    def on_loaded(info: ModelLoaded) -> None:
        infos.append(info)
        loaded.set()

    worker.modelLoaded.connect(on_loaded, Qt.ConnectionType.DirectConnection)
    worker.loadFailed.connect(lambda _m: loaded.set(), Qt.ConnectionType.DirectConnection)
    worker.load_model(model)
    if not loaded.wait(LOAD_TIMEOUT_S) or not infos:
        worker.shutdown()
        raise RuntimeError(f"the tiny model at {model} did not load")
    return Served(worker, holder[0], infos[0])


@asynccontextmanager
async def serving(
    served: Served,
    config: ServerConfig | None = None,
    max_pending: int = 8,
    knowledge: KnowledgeBase | None = None,
) -> AsyncIterator[tuple[LocalServer, openai.AsyncOpenAI]]:
    """A running server on a free loopback port and a client for it (no retries); requests
    may name the collections of `knowledge`."""
    config = config or ServerConfig(port=0)
    generations = ServedGenerations(
        served.worker, served.model_info, max_pending=max_pending, knowledge=knowledge
    )
    server = LocalServer(generations, config)
    await server.start()
    client = openai.AsyncOpenAI(
        base_url=server.url, api_key=config.api_key or "unused", max_retries=0, timeout=30
    )
    try:
        yield server, client
    finally:
        await client.close()
        await server.stop()
        generations.close()
