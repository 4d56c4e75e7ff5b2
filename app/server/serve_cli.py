"""`branchwise serve`: the local OpenAI-compatible server without a window.

For machines without a display and for scripts. It loads one model folder on the inference
worker, serves it on a plain asyncio loop (no Qt event loop, no QtWidgets: the worker's signals
reach the server directly), prints the URL once it answers, and stops cleanly on SIGINT or
SIGTERM: open replies are cancelled, the port is closed, the worker thread ends.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

from PySide6.QtCore import Qt

from app.generation.worker import InferenceWorker
from app.logs import configure_logging
from app.paths import AppPaths
from app.server.config import ServerConfig, ServerConfigError
from app.server.served_requests import DEFAULT_MAX_PENDING
from app.settings import Preferences

API_KEY_ENV = "BRANCHWISE_API_KEY"
_log = logging.getLogger(__name__)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="branchwise serve",
        description="Serve a local model over an OpenAI-compatible API, without a window.",
    )
    parser.add_argument("--model", type=Path, required=True, help="an MLX model folder")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=1234, help="port (1234; 0: any free one)")
    parser.add_argument(
        "--api-key",
        default=os.environ.get(API_KEY_ENV, ""),
        help=f"require 'Authorization: Bearer KEY' (or set {API_KEY_ENV}); needed off loopback",
    )
    parser.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="let web pages from ORIGIN call the server (repeatable), e.g. http://localhost:3000",
    )
    parser.add_argument(
        "--max-pending",
        type=int,
        default=DEFAULT_MAX_PENDING,
        help=f"requests waiting or running at once before 503 ({DEFAULT_MAX_PENDING})",
    )
    parser.add_argument(
        "--data-dir",
        help="the app's data folder: where the log is kept, and the knowledge requests may name",
    )
    parser.add_argument("--verbose", action="store_true", help="log everything")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    config = ServerConfig(args.host, args.port, args.api_key, tuple(args.cors_origin))
    try:
        config.check()
    except ServerConfigError as exc:
        print(f"branchwise serve: {exc}", file=sys.stderr)
        return 2
    if not (args.model / "config.json").is_file():
        print(
            f"branchwise serve: {args.model} is not a model folder (no config.json).",
            file=sys.stderr,
        )
        return 2
    paths = AppPaths.resolve(args.data_dir)
    configure_logging(paths.logs_dir, verbose=args.verbose)
    return asyncio.run(_serve(args.model, config, args.max_pending, paths))


async def _serve(model: Path, config: ServerConfig, max_pending: int, paths: AppPaths) -> int:
    from app.generation.knowledge_index import IndexKnowledge, default_embedder
    from app.server.openai_server import LocalServer
    from app.server.served_requests import ServedGenerations

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    worker = InferenceWorker()
    loaded: asyncio.Future[str | None] = loop.create_future()

    def settle(failure: str | None) -> None:
        if not loaded.done():
            loaded.set_result(failure)

    generations = ServedGenerations(
        worker,
        max_pending=max_pending,
        knowledge=IndexKnowledge(paths.knowledge_database, default_embedder()),
        knowledge_budget=lambda: Preferences(paths.settings_file).knowledge_budget_tokens,
    )
    # Direct: this process runs no Qt event loop to deliver queued signals.
    direct = Qt.ConnectionType.DirectConnection
    worker.modelLoaded.connect(lambda _info: loop.call_soon_threadsafe(settle, None), direct)
    worker.loadFailed.connect(
        lambda failure: loop.call_soon_threadsafe(settle, failure.message), direct
    )
    print(f"Loading {model}…", file=sys.stderr, flush=True)
    worker.load_model(model)
    server = LocalServer(generations, config)
    try:
        failure = await _first(loaded, stop)
        if stop.is_set():
            return 0
        if failure is not None:
            print(f"branchwise serve: the model failed to load: {failure}", file=sys.stderr)
            return 1
        try:
            url = await server.start()
        except OSError as exc:
            print(
                f"branchwise serve: cannot listen on {config.host}:{config.port}: {exc}",
                file=sys.stderr,
            )
            return 1
        model_id = generations.model.model_id if generations.model else None
        print(f"Serving {model_id} at {url} (Ctrl+C stops)", flush=True)
        await stop.wait()
        print("Stopping…", file=sys.stderr, flush=True)
        return 0
    finally:
        await server.stop()
        generations.close()
        _end_worker(worker)


async def _first(loaded: asyncio.Future[str | None], stop: asyncio.Event) -> str | None:
    """Wait for the model to load, or for a signal to stop first."""
    stopped = asyncio.ensure_future(stop.wait())
    await asyncio.wait({loaded, stopped}, return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    return loaded.result() if loaded.done() else None


def _end_worker(worker: InferenceWorker) -> None:
    """End the worker thread; one stuck in a step nothing interrupts (loading weights) would
    abort the interpreter's teardown, so then leave at once, as the window does."""
    if not worker.shutdown():
        _log.warning("The inference worker did not stop in time; exiting without waiting.")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
