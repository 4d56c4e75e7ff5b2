"""Running one approved tool call off the GUI thread's way: on the app's asyncio loop (Qt's own,
through qasync), through the MCP servers or, for the built-in tools, the store
(`search_conversations`) or the knowledge index (`app.chat.knowledge.tools`). The window
never waits: the result comes back through a callback on the loop's thread, and a run can be
cancelled at any time (the call's task is cancelled, and the server told so by the SDK).

A timeout, a crashed server or a cancel all come back as an error result, never an exception.
"""

from __future__ import annotations

import asyncio
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer

from app.chat.knowledge.tools import TOOL_NAMES as KNOWLEDGE_TOOL_NAMES
from app.mcp.builtin_search import SEARCH_TOOL, search_conversations
from app.mcp.config import BUILTIN_SERVER
from app.mcp.results import ToolFailure, ToolResult
from app.mcp.tool_info import ToolInfo
from app.store.conversations import Store

if TYPE_CHECKING:
    from app.chat.knowledge.tools import KnowledgeTools
    from app.mcp.servers import ToolServers  # the MCP SDK loads with the first server

BUILTIN_TOOLS: tuple[ToolInfo, ...] = (SEARCH_TOOL,)
CANCELLED_TEXT = "The person cancelled this call before it finished."
NO_LOOP_TEXT = "Tools cannot run yet: Branchwise is still starting. Try again in a moment."


def app_loop() -> asyncio.AbstractEventLoop | None:
    """The app's asyncio loop (Qt's, through qasync: `ui.main` sets it as the GUI thread's
    loop once the window is up), or None before that; never makes one."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        pass
    with warnings.catch_warnings():
        # Asking for a loop where none was set would make one (and warn about it).
        warnings.simplefilter("error", DeprecationWarning)
        try:
            return asyncio.get_event_loop_policy().get_event_loop()
        except (DeprecationWarning, RuntimeError):
            return None


class ToolRun:
    """One call in flight; `cancel()` ends it with a cancelled result."""

    def __init__(self, task: asyncio.Task[ToolResult] | None) -> None:
        self._task = task  # None: it could not start (its result is on its way)

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()


class ToolRunner:
    def __init__(
        self,
        store: Store,
        servers: Callable[[], ToolServers | None],
        loop: Callable[[], asyncio.AbstractEventLoop | None] = app_loop,
        knowledge: KnowledgeTools | None = None,
    ) -> None:
        """`servers()`: the MCP servers (None while none was ever started); `loop()`: the
        asyncio loop to run calls on (None while there is none yet); `knowledge`: the
        knowledge tools (offered while there is an index)."""
        self._store = store
        self._servers = servers
        self._loop = loop
        self._knowledge = knowledge

    def available(self) -> list[ToolInfo]:
        """The built-in tools, then those of the servers ready now (server, then name)."""
        servers = self._servers()
        ready = servers.tools() if servers is not None else []
        knowledge = self._knowledge.available() if self._knowledge is not None else []
        return [*BUILTIN_TOOLS, *knowledge, *ready]

    def find(self, model_name: str) -> ToolInfo | None:
        """The tool a model called by its model-facing name."""
        return next((t for t in self.available() if t.model_name == model_name), None)

    def start(
        self,
        tool: ToolInfo,
        arguments: dict[str, Any],
        on_done: Callable[[ToolResult], None],
        conversation_id: int | None = None,
    ) -> ToolRun:
        """Run the call (for the chat `conversation_id`, whose knowledge the knowledge tools
        read); `on_done` gets its result (an error one on failure or cancel) on the loop's
        thread, never before this returns."""
        loop = self._loop()
        started = time.monotonic()
        if loop is None:
            QTimer.singleShot(0, lambda: on_done(ToolResult(NO_LOOP_TEXT, ToolFailure.SERVER)))
            return ToolRun(None)
        task = loop.create_task(self._call(tool, arguments, conversation_id))

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

    async def _call(
        self, tool: ToolInfo, arguments: dict[str, Any], conversation_id: int | None
    ) -> ToolResult:
        if tool.server == BUILTIN_SERVER:
            await asyncio.sleep(0)  # the result always arrives after `start` returned
            if self._knowledge is not None and tool.name in KNOWLEDGE_TOOL_NAMES:
                return await self._knowledge.call(tool.name, arguments, conversation_id)
            return search_conversations(self._store, arguments)
        servers = self._servers()
        if servers is None:
            return ToolResult(
                f"No MCP server is running, so {tool.name} cannot run.", ToolFailure.SERVER
            )
        return await servers.call(tool.server, tool.name, arguments)
