"""Running one approved tool call off the GUI thread's way: on the app's asyncio loop (Qt's own,
through qasync), through the MCP servers or, for `search_conversations`, the store. The window
never waits: the result comes back through a callback on the loop's thread, and a run can be
cancelled at any time (the call's task is cancelled, and the server told so by the SDK).

A timeout, a crashed server or a cancel all come back as an error result, never an exception.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from app.mcp.builtin_search import SEARCH_TOOL, search_conversations
from app.mcp.config import BUILTIN_SERVER
from app.mcp.results import ToolFailure, ToolResult
from app.mcp.servers import ToolServers
from app.mcp.tool_info import ToolInfo
from app.store.conversations import Store

BUILTIN_TOOLS: tuple[ToolInfo, ...] = (SEARCH_TOOL,)
CANCELLED_TEXT = "The person cancelled this call before it finished."


class ToolRun:
    """One call in flight; `cancel()` ends it with a cancelled result."""

    def __init__(self, task: asyncio.Task[ToolResult]) -> None:
        self._task = task

    def cancel(self) -> None:
        self._task.cancel()

    @property
    def done(self) -> bool:
        return self._task.done()


class ToolRunner:
    def __init__(
        self,
        store: Store,
        servers: ToolServers | None,
        loop: Callable[[], asyncio.AbstractEventLoop],
    ) -> None:
        """`loop`: the asyncio loop to run calls on (made when first needed)."""
        self._store = store
        self.servers = servers
        self._loop = loop

    def available(self) -> list[ToolInfo]:
        """The built-in tools, then those of the servers ready now (server, then name)."""
        ready = self.servers.tools() if self.servers is not None else []
        return [*BUILTIN_TOOLS, *ready]

    def find(self, model_name: str) -> ToolInfo | None:
        """The tool a model called by its model-facing name."""
        return next((t for t in self.available() if t.model_name == model_name), None)

    def start(
        self,
        tool: ToolInfo,
        arguments: dict[str, Any],
        on_done: Callable[[ToolResult], None],
    ) -> ToolRun:
        """Run the call; `on_done` gets its result (an error one on failure or cancel) on the
        loop's thread, never before this returns."""
        loop = self._loop()
        started = time.monotonic()
        task = loop.create_task(self._call(tool, arguments))

        def finished(done: asyncio.Task[ToolResult]) -> None:
            if done.cancelled():
                result = ToolResult(CANCELLED_TEXT, ToolFailure.CANCELLED)
            elif done.exception() is not None:
                # The client's contract is to return error results; anything else is a bug
                # there, still reported to the model and the person rather than lost.
                error = done.exception()
                result = ToolResult(f"The call failed: {error!r}", ToolFailure.SERVER)
            else:
                result = done.result()
            if not result.duration_s:
                result = ToolResult(result.text, result.failure, time.monotonic() - started)
            on_done(result)

        task.add_done_callback(finished)
        return ToolRun(task)

    async def _call(self, tool: ToolInfo, arguments: dict[str, Any]) -> ToolResult:
        if tool.server == BUILTIN_SERVER:
            await asyncio.sleep(0)  # the result always arrives after `start` returned
            return search_conversations(self._store, arguments)
        if self.servers is None:
            return ToolResult(f"No MCP servers are set up, so {tool.name} cannot run.",
                              ToolFailure.SERVER)
        return await self.servers.call(tool.server, tool.name, arguments)
