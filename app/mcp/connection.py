"""One MCP server's connection: started, watched, called and stopped without ever blocking the
caller, on whatever asyncio loop is running (qasync in the app, plain asyncio in the CLI).

The SDK's client holds anyio cancel scopes, which must be entered and left in the same task. So
each connection lives in one long-lived owner task: it opens the client, lists the tools, then
serves requests from a queue (each call in a task of its own, so calls run side by side) and, on
stop, leaves the client in that same task. Every wait has a bound: the start (the server's
timeout), each call (its timeout, then a grace period), the stop. A crash, a hang or a broken
protocol becomes a FAILED status with the last lines the server wrote to stderr, or an error
result for the call, never an exception that escapes or a wait that does not end.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

import httpx2
from mcp import Client, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT, Implementation

from app.mcp.config import ServerSpec
from app.mcp.errors import ServerGoneError, describe_failure
from app.mcp.launch import display_command, resolve_command, search_path
from app.mcp.results import ToolFailure, ToolResult, content_text
from app.mcp.tool_info import ToolInfo

STOP_TIMEOUT_S = 10.0  # the SDK's own stdio shutdown takes up to about 6 s
CALL_GRACE_S = 5.0  # past a call's timeout, before the caller stops waiting for the SDK
HEALTH_CHECK_S = 15.0  # how often an idle stdio server is checked (and its tools listed again)
TAIL_LINES = 20
_TAIL_BYTES = 16 * 1024
_MAX_PAGES = 100
_CLIENT_INFO = Implementation(name="Branchwise", version="1")
GONE = "The server closed the connection (it may have crashed)."


class ServerStatus(StrEnum):
    STOPPED = "stopped"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"


@dataclass(frozen=True)
class ServerState:
    name: str
    status: ServerStatus
    tools: tuple[ToolInfo, ...] = ()
    error: str | None = None
    stderr_tail: tuple[str, ...] = ()  # the server's last lines on stderr when it failed


StateListener = Callable[[ServerState], None]


@dataclass(eq=False)
class _Call:
    tool: str
    arguments: dict[str, Any]
    timeout_s: float
    future: asyncio.Future[ToolResult]
    task: asyncio.Task[None] | None = None
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True
        if self.task is not None:
            self.task.cancel()


@dataclass(eq=False)
class _Refresh:
    future: asyncio.Future[tuple[ToolInfo, ...]]


_STOP, _LOST = "stop", "lost"


@dataclass(eq=False)
class _Run:
    """What one start of the owner task shares with the callers."""

    requests: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)
    settled: asyncio.Event = field(default_factory=asyncio.Event)  # no longer STARTING
    calls: set[_Call] = field(default_factory=set)
    closing: bool = False  # no new call is taken


class ServerConnection:
    def __init__(
        self,
        spec: ServerSpec,
        *,
        log_path: Path | None = None,
        on_change: StateListener | None = None,
        health_check_s: float = HEALTH_CHECK_S,
    ) -> None:
        self.spec = spec
        self._log_path = log_path
        self._on_change = on_change
        self._health_check_s = health_check_s
        self._state = ServerState(spec.name, ServerStatus.STOPPED)
        self._task: asyncio.Task[None] | None = None
        self._run: _Run | None = None
        self._errlog: IO[str] | None = None

    @property
    def state(self) -> ServerState:
        return self._state

    @property
    def command_line(self) -> str:
        """What will run, for the person to see before it first does (secrets masked)."""
        return display_command(self.spec)

    def start(self) -> None:
        """Start connecting in the background (on the running loop); returns at once."""
        if self._task is not None and not self._task.done():
            return
        if self.spec.problem is not None:
            self._set(ServerStatus.FAILED, error=self.spec.problem)
            return
        self._run = _Run()
        self._set(ServerStatus.STARTING)
        self._task = asyncio.get_running_loop().create_task(
            self._own(self._run), name=f"mcp server {self.spec.name}"
        )

    async def wait_started(self, timeout_s: float | None = None) -> ServerState:
        """The state once the start has succeeded or failed (or `timeout_s` has passed)."""
        run = self._run
        if run is not None and self._state.status is ServerStatus.STARTING:
            limit = timeout_s if timeout_s is not None else self.spec.timeout_s + STOP_TIMEOUT_S
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(limit):
                    await run.settled.wait()
        return self._state

    async def stop(self) -> None:
        """Close the connection (the server process ends with it) within a bound."""
        task, run = self._task, self._run
        if task is None or run is None or task.done():
            if self._state.status is not ServerStatus.FAILED:
                self._set(ServerStatus.STOPPED)
            return
        if self._state.status is ServerStatus.STARTING:
            task.cancel()
        else:
            run.requests.put_nowait(_STOP)
        _, pending = await asyncio.wait({task}, timeout=STOP_TIMEOUT_S)
        if pending:
            task.cancel()
            _, pending = await asyncio.wait({task}, timeout=STOP_TIMEOUT_S)
        if pending:  # stuck past every bound: left behind, reported stopped
            self._set(ServerStatus.STOPPED, error="The connection did not close in time.")

    async def restart(self) -> ServerState:
        await self.stop()
        self.start()
        return await self.wait_started()

    async def refresh_tools(self) -> ServerState:
        """List the tools again (a server may change them, or their descriptions)."""
        run = self._run
        if run is None or self._state.status is not ServerStatus.READY:
            return self._state
        request = _Refresh(asyncio.get_running_loop().create_future())
        run.requests.put_nowait(request)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.spec.timeout_s + CALL_GRACE_S):
                await request.future
        return self._state

    async def call(
        self, tool: str, arguments: dict[str, Any], timeout_s: float | None = None
    ) -> ToolResult:
        """Call `tool`; always returns (an error result on a timeout or a dead server). Cancel
        the awaiting task to cancel the call: the server is told, and CancelledError raised."""
        run = self._run
        if run is None or run.closing or self._state.status is not ServerStatus.READY:
            why = f": {self._state.error}" if self._state.error else ""
            return ToolResult(
                f"The server {self.spec.name} is {self._state.status.value}{why}",
                ToolFailure.SERVER,
            )
        timeout_s = timeout_s or self.spec.timeout_s
        request = _Call(tool, arguments, timeout_s, asyncio.get_running_loop().create_future())
        run.requests.put_nowait(request)
        try:
            async with asyncio.timeout(timeout_s + CALL_GRACE_S):
                return await asyncio.shield(request.future)
        except TimeoutError:
            request.cancel()
            return _timed_out(self.spec.name, tool, timeout_s)
        except asyncio.CancelledError:
            request.cancel()
            raise

    def stderr_tail(self) -> tuple[str, ...]:
        """The server's last lines on stderr: now while it runs, else when it stopped."""
        if self._errlog is not None and not self._errlog.closed:
            return _tail(self._errlog)
        return self._state.stderr_tail

    # --- the owner task ----------------------------------------------------------------------

    async def _own(self, run: _Run) -> None:
        self._errlog = self._open_log()
        try:
            await self._connected(run)
            self._set(ServerStatus.STOPPED)
        except asyncio.CancelledError:
            self._set(ServerStatus.STOPPED, stderr_tail=_tail(self._errlog))
            raise
        except Exception as exc:
            self._set(
                ServerStatus.FAILED,
                error=describe_failure(exc, self.spec),
                stderr_tail=_tail(self._errlog),
            )
        finally:
            run.closing = True
            run.settled.set()
            _answer_leftovers(run, self.spec.name)
            self._errlog.close()

    async def _connected(self, run: _Run) -> None:
        path = await asyncio.to_thread(search_path) if self.spec.command else ""
        async with AsyncExitStack() as stack:
            try:
                async with asyncio.timeout(self.spec.timeout_s):
                    client = await self._open_client(stack, path)
                    tools = await _list_tools(client, self.spec.name)
            except TimeoutError as exc:
                raise TimeoutError(
                    f"The server did not start within {self.spec.timeout_s:g} s."
                ) from exc
            self._set(ServerStatus.READY, tools=tools)
            run.settled.set()
            try:
                await self._serve(client, run)
            finally:
                await _cancel_calls(run.calls)

    async def _open_client(self, stack: AsyncExitStack, path: str) -> Client:
        spec = self.spec
        if spec.url:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=spec.headers, timeout=httpx2.Timeout(30, read=300))
            )
            transport: Any = streamable_http_client(spec.url, http_client=http)
        else:
            assert spec.command is not None
            params = StdioServerParameters(
                command=resolve_command(spec.command, path),
                args=list(spec.args),
                env={"PATH": path, **spec.env},
                cwd=spec.cwd,
            )
            transport = stdio_client(params, errlog=self._errlog)
        client = Client(transport, cache=None, client_info=_CLIENT_INFO)
        return await stack.enter_async_context(client)

    async def _serve(self, client: Client, run: _Run) -> None:
        while True:
            try:
                async with asyncio.timeout(self._health_check_s):
                    request = await run.requests.get()
            except TimeoutError:
                if not run.calls and self.spec.command:  # a local process that may have died
                    await self._check(client)
                continue
            if request == _STOP:
                run.closing = True
                return
            if request == _LOST:
                raise ServerGoneError(GONE)
            if isinstance(request, _Refresh):
                await self._refresh(client, request)
            elif not request.cancelled:
                request.task = asyncio.create_task(self._call(client, request, run))
                run.calls.add(request)

    async def _check(self, client: Client) -> None:
        tools = await _probe(client, self.spec.name, self.spec.timeout_s)
        if tools is not None and tools != self._state.tools:
            self._set(ServerStatus.READY, tools=tools)

    async def _refresh(self, client: Client, request: _Refresh) -> None:
        try:
            async with asyncio.timeout(self.spec.timeout_s):
                tools = await _list_tools(client, self.spec.name)
        except (TimeoutError, MCPError):
            request.future.set_result(self._state.tools)  # keep what was listed before
            return
        self._set(ServerStatus.READY, tools=tools)
        request.future.set_result(tools)

    async def _call(self, client: Client, request: _Call, run: _Run) -> None:
        started = time.monotonic()
        outcome = ToolResult(f"The call to {request.tool} was cancelled.", ToolFailure.CANCELLED)
        try:
            outcome = await self._outcome(client, request, run)
        finally:
            run.calls.discard(request)
            if not request.future.done():
                request.future.set_result(replace(outcome, duration_s=time.monotonic() - started))

    async def _outcome(self, client: Client, request: _Call, run: _Run) -> ToolResult:
        try:
            result = await client.call_tool(
                request.tool, request.arguments, read_timeout_seconds=request.timeout_s
            )
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                run.closing = True
                run.requests.put_nowait(_LOST)
            return _call_error(exc, self.spec.name, request)
        except Exception as exc:  # a result the SDK could not read: the server's fault
            return ToolResult(
                f"{self.spec.name} sent an unreadable result: {describe_failure(exc, self.spec)}",
                ToolFailure.SERVER,
            )
        failure = ToolFailure.TOOL if result.is_error else None
        return ToolResult(content_text(result.content, result.structured_content), failure)

    def _open_log(self) -> IO[str]:
        if self._log_path is None:
            return tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        self._log_path.parent.mkdir(parents=True, exist_ok=True)
        return self._log_path.open("w+", encoding="utf-8", errors="replace")

    def _set(
        self,
        status: ServerStatus,
        *,
        tools: tuple[ToolInfo, ...] = (),
        error: str | None = None,
        stderr_tail: tuple[str, ...] = (),
    ) -> None:
        self._state = ServerState(self.spec.name, status, tools, error, stderr_tail)
        if self._on_change is not None:
            self._on_change(self._state)


async def _list_tools(client: Client, server: str) -> tuple[ToolInfo, ...]:
    tools: list[ToolInfo] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):  # a server that pages forever cannot hang the start
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            annotations = tool.annotations.model_dump(exclude_none=True) if tool.annotations else {}
            schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
            tools.append(
                ToolInfo(server, tool.name, tool.description or "", dict(schema), tool.title,
                         annotations)
            )
        cursor = page.next_cursor
        if not cursor:
            break
    return tuple(tools)


async def _probe(client: Client, server: str, timeout_s: float) -> tuple[ToolInfo, ...] | None:
    """The tools listed again, as a sign of life (ping is gone from the 2026 protocol). Raises
    ServerGoneError when the connection is closed; a slow or odd answer proves nothing (None):
    a hung server is caught by each call's timeout."""
    try:
        async with asyncio.timeout(timeout_s):
            return await _list_tools(client, server)
    except MCPError as exc:
        if exc.code == CONNECTION_CLOSED:
            raise ServerGoneError(GONE) from exc
    except TimeoutError:
        pass
    return None


async def _cancel_calls(calls: set[_Call]) -> None:
    tasks = [c.task for c in calls if c.task is not None]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=CALL_GRACE_S)


def _answer_leftovers(run: _Run, server: str) -> None:
    """Calls still queued when the connection ended get an error result, never a hang."""
    while not run.requests.empty():
        request = run.requests.get_nowait()
        if isinstance(request, _Call | _Refresh) and not request.future.done():
            if isinstance(request, _Refresh):
                request.future.set_result(())
            else:
                request.future.set_result(
                    ToolResult(f"The server {server} stopped before the call ran.",
                               ToolFailure.SERVER)
                )


def _call_error(exc: MCPError, server: str, request: _Call) -> ToolResult:
    if exc.code == REQUEST_TIMEOUT:
        return _timed_out(server, request.tool, request.timeout_s)
    if exc.code == CONNECTION_CLOSED:
        return ToolResult(
            f"The server {server} closed the connection during the call to {request.tool} "
            "(it may have crashed).",
            ToolFailure.SERVER,
        )
    return ToolResult(f"{server} refused the call to {request.tool}: {exc}", ToolFailure.SERVER)


def _timed_out(server: str, tool: str, timeout_s: float) -> ToolResult:
    return ToolResult(
        f"{tool} on {server} did not answer within {timeout_s:g} s; the call was cancelled.",
        ToolFailure.TIMEOUT,
        timeout_s,
    )


def _tail(file: IO[str]) -> tuple[str, ...]:
    """The last lines of a log file the server writes to directly (read by position, so the
    file's own offset is left alone)."""
    if file.closed:
        return ()
    try:
        file.flush()
        descriptor = file.fileno()
        size = os.fstat(descriptor).st_size
        data = os.pread(descriptor, _TAIL_BYTES, max(0, size - _TAIL_BYTES))
    except OSError:
        return ()
    lines = data.decode("utf-8", "replace").splitlines()
    if size > _TAIL_BYTES and lines:
        lines = lines[1:]  # the first may be cut
    return tuple(line[:500] for line in lines if line.strip())[-TAIL_LINES:]
