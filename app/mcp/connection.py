"""One MCP server's connection: started, watched, called and stopped without ever blocking the
caller, on whatever asyncio loop is running (qasync in the app, plain asyncio in the CLI).

The SDK's client holds anyio cancel scopes, which must be entered and left in the same task. So
each connection lives in one long-lived owner task: it opens the client, lists the tools, then
serves requests from a queue (each call in a task of its own, so calls run side by side) and, on
stop, leaves the client in that same task. Every wait has a bound: the start (the server's
timeout, at least MIN_START_S), each call (its timeout, then a grace period), the stop. A crash,
a hang or a broken protocol becomes a FAILED status with the last lines the server wrote to
stderr, or an error result for the call, never an exception that escapes or a wait that does not
end.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

import httpx2
from mcp import Client, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT, Implementation

from app.mcp.call_queue import (
    CALL_GRACE_S,
    LOST,
    STOP,
    CallRequest,
    Inbox,
    RefreshRequest,
    timed_out,
)
from app.mcp.config import ServerSpec
from app.mcp.errors import ServerGoneError, describe_failure
from app.mcp.launch import display_command, resolve_command, search_path
from app.mcp.results import ToolFailure, ToolResult, content_text
from app.mcp.stderr_log import open_log, tail
from app.mcp.tool_info import ServerState, ServerStatus, StateListener, ToolInfo

STOP_TIMEOUT_S = 10.0  # the SDK's own stdio shutdown takes up to about 6 s
# A server gets at least this long to start, whatever its calls' timeout: spawning it (npx or uvx
# resolving packages, a busy machine) often takes longer than a quick call may.
MIN_START_S = 10.0
HEALTH_CHECK_S = 15.0  # how often an idle stdio server is checked (and its tools listed again)
_MAX_PAGES = 100
_CLIENT_INFO = Implementation(name="Branchwise", version="1")
GONE = "The server closed the connection (it may have crashed)."


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
        self._inbox: Inbox | None = None
        self._errlog: TextIO | None = None

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
        self._inbox = Inbox()
        self._set(ServerStatus.STARTING)
        self._task = asyncio.get_running_loop().create_task(
            self._own(self._inbox), name=f"mcp server {self.spec.name}"
        )

    def _start_bound(self) -> float:
        return max(self.spec.timeout_s, MIN_START_S)

    async def wait_started(self, timeout_s: float | None = None) -> ServerState:
        """The state once the start has succeeded or failed (or `timeout_s` has passed)."""
        run = self._inbox
        if run is not None and self._state.status is ServerStatus.STARTING:
            limit = timeout_s if timeout_s is not None else self._start_bound() + STOP_TIMEOUT_S
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(limit):
                    await run.settled.wait()
        return self._state

    async def stop(self) -> None:
        """Close the connection (the server process ends with it) within a bound."""
        task, run = self._task, self._inbox
        if task is None or run is None or task.done():
            if self._state.status is not ServerStatus.FAILED:
                self._set(ServerStatus.STOPPED)
            return
        if self._state.status is ServerStatus.STARTING:
            task.cancel()
        else:
            run.requests.put_nowait(STOP)
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
        run = self._inbox
        if run is None or self._state.status is not ServerStatus.READY:
            return self._state
        request = RefreshRequest(asyncio.get_running_loop().create_future())
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
        run = self._inbox
        if run is None or run.closing or self._state.status is not ServerStatus.READY:
            why = f": {self._state.error}" if self._state.error else ""
            return ToolResult(
                f"The server {self.spec.name} is {self._state.status.value}{why}",
                ToolFailure.SERVER,
            )
        timeout_s = timeout_s or self.spec.timeout_s
        future = asyncio.get_running_loop().create_future()
        request = CallRequest(tool, arguments, timeout_s, future)
        run.requests.put_nowait(request)
        try:
            async with asyncio.timeout(timeout_s + CALL_GRACE_S):
                return await asyncio.shield(request.future)
        except TimeoutError:
            request.cancel()
            return timed_out(self.spec.name, tool, timeout_s)
        except asyncio.CancelledError:
            request.cancel()
            raise

    def stderr_tail(self) -> tuple[str, ...]:
        """The server's last lines on stderr: now while it runs, else when it stopped."""
        if self._errlog is not None and not self._errlog.closed:
            return tail(self._errlog)
        return self._state.stderr_tail

    # --- the owner task ----------------------------------------------------------------------

    async def _own(self, run: Inbox) -> None:
        self._errlog = open_log(self._log_path)
        try:
            await self._connected(run)
        except Exception as exc:
            self._set(
                ServerStatus.FAILED,
                error=describe_failure(exc, self.spec),
                stderr_tail=tail(self._errlog),
            )
        finally:
            # Stopped, cancelled, or ended by something stranger (a BaseExceptionGroup): never
            # left looking alive.
            if self._state.status in (ServerStatus.STARTING, ServerStatus.READY):
                self._set(ServerStatus.STOPPED, stderr_tail=tail(self._errlog))
            run.settled.set()
            run.answer_leftovers(self.spec.name)
            self._errlog.close()

    async def _connected(self, run: Inbox) -> None:
        path = await asyncio.to_thread(search_path) if self.spec.command else ""
        async with AsyncExitStack() as stack:
            bound = self._start_bound()
            try:
                async with asyncio.timeout(bound):
                    client = await self._open_client(stack, path)
                    tools = await _list_tools(client, self.spec.name)
            except TimeoutError as exc:
                raise TimeoutError(f"The server did not start within {bound:g} s.") from exc
            self._set(ServerStatus.READY, tools=tools)
            run.settled.set()
            try:
                await self._serve(client, run)
            finally:
                await run.cancel_calls()

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
            assert self._errlog is not None  # `_own` opened it before connecting
            transport = stdio_client(params, errlog=self._errlog)
        client = Client(transport, cache=None, client_info=_CLIENT_INFO)
        return await stack.enter_async_context(client)

    async def _serve(self, client: Client, run: Inbox) -> None:
        while True:
            try:
                async with asyncio.timeout(self._health_check_s):
                    request = await run.requests.get()
            except TimeoutError:
                if not run.calls and self.spec.command:  # a local process that may have died
                    await self._check(client)
                continue
            if request == STOP:
                run.closing = True
                return
            if request == LOST:
                raise ServerGoneError(GONE)
            if isinstance(request, RefreshRequest):
                await self._refresh(client, request)
            elif not request.cancelled:
                request.task = asyncio.create_task(self._call(client, request, run))
                run.calls.add(request)

    async def _check(self, client: Client) -> None:
        tools = await _probe(client, self.spec.name, self.spec.timeout_s)
        if tools is not None and tools != self._state.tools:
            self._set(ServerStatus.READY, tools=tools)

    async def _refresh(self, client: Client, request: RefreshRequest) -> None:
        try:
            async with asyncio.timeout(self.spec.timeout_s):
                tools = await _list_tools(client, self.spec.name)
        except Exception:  # slow, gone or garbled: keep what was listed before
            request.future.set_result(self._state.tools)
            return
        self._set(ServerStatus.READY, tools=tools)
        request.future.set_result(tools)

    async def _call(self, client: Client, request: CallRequest, run: Inbox) -> None:
        started = time.monotonic()
        outcome = ToolResult(f"The call to {request.tool} was cancelled.", ToolFailure.CANCELLED)
        try:
            outcome = await self._outcome(client, request, run)
        finally:
            run.calls.discard(request)
            if not request.future.done():
                request.future.set_result(replace(outcome, duration_s=time.monotonic() - started))

    async def _outcome(self, client: Client, request: CallRequest, run: Inbox) -> ToolResult:
        try:
            result = await client.call_tool(
                request.tool, request.arguments, read_timeout_seconds=request.timeout_s
            )
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                run.closing = True
                run.requests.put_nowait(LOST)
            return _call_error(exc, self.spec.name, request)
        except Exception as exc:  # a result the SDK could not read: the server's fault
            return ToolResult(
                f"{self.spec.name} sent an unreadable result: {describe_failure(exc, self.spec)}",
                ToolFailure.SERVER,
            )
        failure = ToolFailure.TOOL if result.is_error else None
        return ToolResult(content_text(result.content, result.structured_content), failure)

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
                ToolInfo(
                    server, tool.name, tool.description or "", dict(schema), tool.title, annotations
                )
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


def _call_error(exc: MCPError, server: str, request: CallRequest) -> ToolResult:
    if exc.code == REQUEST_TIMEOUT:
        return timed_out(server, request.tool, request.timeout_s)
    if exc.code == CONNECTION_CLOSED:
        return ToolResult(
            f"The server {server} closed the connection during the call to {request.tool} "
            "(it may have crashed).",
            ToolFailure.SERVER,
        )
    return ToolResult(f"{server} refused the call to {request.tool}: {exc}", ToolFailure.SERVER)
