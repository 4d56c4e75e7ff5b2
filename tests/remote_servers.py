"""Real OpenAI-compatible servers for the remote-backend tests, all on loopback.

`mlx_lm.server` runs on a tiny model folder with the Hugging Face hub offline and an empty cache
folder, so nothing can be downloaded; `served_by_ring` runs the same server over two processes
with MLX's own launcher (the ring backend, tensor parallel). Each server runs in its own process
group, is killed whole when its test ends, and carries a deadline after which it kills itself,
so nothing outlives a test run that is itself killed.

`KeyProxy` and `SlowProxy` are tiny aiohttp proxies run on the test's asyncio loop in front of a
server: one requires an API key, the other holds the first byte of each answer back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from aiohttp import ClientSession, web

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent
# A server left over by a killed test run ends itself after this long.
SERVER_LIFETIME_S = 600
READY_TIMEOUT_S = 120


@dataclass
class Served:
    base_url: str  # ends in /v1
    model: str  # the id the server lists (mlx_lm.server: the folder path it was given)
    process: subprocess.Popen[bytes]
    log: Path

    def kill(self) -> None:
        """End the server and every process it started, at once (no clean shutdown)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _offline_env(cache: Path) -> dict[str, str]:
    cache.mkdir(parents=True, exist_ok=True)
    # The repository on the path: the server runs from `cache`'s folder, not the checkout.
    return {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_CACHE": str(cache),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }


def _start(command: list[str], model: Path, port: int, workdir: Path) -> Served:
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / f"server-{port}.log"
    with log.open("wb") as out:
        # `timeout` is the deadline for a run that dies without its teardown.
        process = subprocess.Popen(
            ["timeout", "-s", "KILL", str(SERVER_LIFETIME_S), *command],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=_offline_env(workdir / "hf-cache"),
            cwd=workdir,
            start_new_session=True,
        )
    served = Served(f"http://127.0.0.1:{port}/v1", str(model), process, log)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"The server exited early:\n{log.read_text(errors='replace')}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{served.base_url}/models", timeout=2) as answer,
        ):
            listed = [m["id"] for m in json.load(answer)["data"]]
            assert listed == [str(model)], listed
            return served
        time.sleep(0.3)
    served.kill()
    raise RuntimeError(f"The server did not start in time:\n{log.read_text(errors='replace')}")


def _server_args(model: Path, port: int) -> list[str]:
    return ["--model", str(model), "--host", "127.0.0.1", "--port", str(port)]


@contextlib.contextmanager
def served_by_mlx_lm(model: Path, workdir: Path) -> Iterator[Served]:
    port = free_port()
    # Through inference.cpu.run_module: the fast BLAS loads before mlx-lm imports MLX.
    command = [
        sys.executable,
        "-m",
        "inference.cpu.run_module",
        "mlx_lm",
        "server",
        *_server_args(model, port),
    ]
    served = _start(command, model, port, workdir)
    try:
        yield served
    finally:
        served.kill()


@contextlib.contextmanager
def served_by_ring(model: Path, workdir: Path) -> Iterator[Served]:
    """`mlx.launch --backend ring -n 2 --hosts 127.0.0.1 -- mlx_lm.server ...`: rank 0 answers
    HTTP, both ranks hold half of every layer and compute each token together."""
    port = free_port()
    ring_port = free_port()
    command = [
        str(BIN / "mlx.launch"),
        "--backend", "ring",
        "-n", "2",
        "--hosts", "127.0.0.1",
        "--starting-port", str(ring_port),
        "--",
        str(BIN / "mlx_lm.server"),
        *_server_args(model, port),
    ]  # fmt: skip
    served = _start(command, model, port, workdir)
    try:
        yield served
    finally:
        served.kill()


def play(
    loop: asyncio.AbstractEventLoop, scenario: Awaitable[None], timeout_s: float = 180
) -> None:
    """Run a test's steps as one coroutine: the loop runs throughout, as it does in the app (a
    remote request starts only on a running loop)."""
    loop.run_until_complete(asyncio.wait_for(scenario, timeout_s))


async def until(predicate: Callable[[], bool], timeout_s: float = 60.0) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout_s)


class RecordingProxy:
    """Forwards every request to `upstream`, streaming the answer back as it comes, and keeps
    the JSON bodies it forwarded."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.removesuffix("/v1")
        self.requests: list[dict] = []
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    async def start(self) -> str:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        # A client that goes away cancels its handler, as a real server's generation would stop.
        self._runner = web.AppRunner(
            app, handle_signals=False, handler_cancellation=True, shutdown_timeout=1.0
        )
        await self._runner.setup()
        port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def before_forwarding(self, request: web.Request) -> web.StreamResponse | None:
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        refused = await self.before_forwarding(request)
        if refused is not None:
            return refused
        body = await request.read()
        if body:
            self.requests.append(json.loads(body))
        headers = {"content-type": request.headers.get("content-type", "application/json")}
        response = web.StreamResponse()
        async with (
            ClientSession() as session,
            session.request(
                request.method, self.upstream + request.path, data=body, headers=headers
            ) as upstream,
        ):
            response.set_status(upstream.status)
            response.content_type = upstream.content_type
            await self.before_first_byte()
            await response.prepare(request)
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
        await response.write_eof()
        return response

    async def before_first_byte(self) -> None:
        return None


class KeyProxy(RecordingProxy):
    """Answers 401, as OpenAI does, unless the request carries `Bearer <key>`."""

    def __init__(self, upstream: str, key: str) -> None:
        super().__init__(upstream)
        self.key = key

    async def before_forwarding(self, request: web.Request) -> web.StreamResponse | None:
        if request.headers.get("Authorization") == f"Bearer {self.key}":
            return None
        error = {"message": "Incorrect API key provided.", "type": "invalid_request_error",
                 "param": None, "code": "invalid_api_key"}  # fmt: skip
        return web.json_response({"error": error}, status=401)


class SlowProxy(RecordingProxy):
    """Holds each answer's first byte back for `delay_s` (a server busy with a long prompt)."""

    def __init__(self, upstream: str, delay_s: float) -> None:
        super().__init__(upstream)
        self.delay_s = delay_s

    async def before_first_byte(self) -> None:
        await asyncio.sleep(self.delay_s)
