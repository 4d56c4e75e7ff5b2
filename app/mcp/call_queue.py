"""What passes between callers and a connection's owner task: the queued requests (a call, a
fresh tool listing, stop, "the server is gone"), and what the owner does with calls left over
when the connection ends: each gets an error result, so no caller waits forever."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from app.mcp.results import ToolFailure, ToolResult
from app.mcp.tool_info import ToolInfo

CALL_GRACE_S = 5.0  # past a call's timeout, before the caller stops waiting for the SDK
STOP, LOST = "stop", "lost"


@dataclass(eq=False)
class CallRequest:
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
class RefreshRequest:
    future: asyncio.Future[tuple[ToolInfo, ...]]


@dataclass(eq=False)
class Inbox:
    """What one start of the owner task shares with the callers."""

    requests: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)
    settled: asyncio.Event = field(default_factory=asyncio.Event)  # no longer starting
    calls: set[CallRequest] = field(default_factory=set)  # running now
    closing: bool = False  # no new call is taken

    async def cancel_calls(self) -> None:
        tasks = [c.task for c in self.calls if c.task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=CALL_GRACE_S)

    def answer_leftovers(self, server: str) -> None:
        """Requests still queued when the connection ended get an answer, never a hang."""
        self.closing = True
        while not self.requests.empty():
            request = self.requests.get_nowait()
            if isinstance(request, RefreshRequest) and not request.future.done():
                request.future.set_result(())
            elif isinstance(request, CallRequest) and not request.future.done():
                request.future.set_result(
                    ToolResult(
                        f"The server {server} stopped before the call ran.", ToolFailure.SERVER
                    )
                )


def timed_out(server: str, tool: str, timeout_s: float) -> ToolResult:
    return ToolResult(
        f"{tool} on {server} did not answer within {timeout_s:g} s; the call was cancelled.",
        ToolFailure.TIMEOUT,
        timeout_s,
    )
