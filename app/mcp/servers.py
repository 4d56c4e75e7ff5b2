"""All the configured MCP servers' connections, by name: start the enabled ones in the
background, list what is ready, call a tool by server and name (its arguments checked against
the tool's schema first), restart, stop, and follow changes to the config.

Used alike by the window (on the qasync loop) and by `branchwise tools` (plain asyncio).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import UnknownType, best_match
from jsonschema.validators import validator_for

from app.mcp.config import McpConfig, ServerSpec
from app.mcp.connection import ServerConnection
from app.mcp.results import ToolFailure, ToolResult
from app.mcp.tool_info import ServerState, ServerStatus, StateListener, ToolInfo

_NOT_FILE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


class ToolServers:
    def __init__(
        self,
        config: McpConfig,
        *,
        log_dir: Path | None = None,
        on_change: StateListener | None = None,
        **connection_options: Any,
    ) -> None:
        """`log_dir`: where each server's stderr is kept (`<name>.log`); None: temporary files.
        `on_change` hears every status change, on the loop's thread."""
        self._log_dir = log_dir
        self._on_change = on_change
        self._options = connection_options
        self._connections: dict[str, ServerConnection] = {}
        self._autostart = False
        for spec in config.servers.values():
            self._connections[spec.name] = self._connection(spec)

    def states(self) -> list[ServerState]:
        return [c.state for c in self._connections.values()]

    def connection(self, name: str) -> ServerConnection | None:
        return self._connections.get(name)

    def start_enabled(self) -> None:
        """Start every enabled server in the background; returns at once."""
        self._autostart = True
        for connection in self._connections.values():
            if connection.spec.enabled or connection.spec.problem is not None:
                connection.start()

    async def wait_started(self, timeout_s: float | None = None) -> list[ServerState]:
        """Every server's state once those starting have started or failed."""
        waits = [c.wait_started(timeout_s) for c in self._connections.values()]
        return list(await asyncio.gather(*waits))

    def tools(self) -> list[ToolInfo]:
        """The tools of the servers ready now, in a stable order (server, then name), so the
        prompt that lists them does not change by itself."""
        found = [
            t
            for c in self._connections.values()
            for t in c.state.tools
            if c.state.status is ServerStatus.READY
        ]
        return sorted(found, key=lambda t: (t.server, t.name))

    def find(self, model_name: str) -> ToolInfo | None:
        """The tool a model called by its model-facing name (`server__tool`)."""
        return next((t for t in self.tools() if t.model_name == model_name), None)

    async def call(
        self, server: str, tool: str, arguments: object, timeout_s: float | None = None
    ) -> ToolResult:
        """Call a tool; always a result, an error one when the server, the tool or the
        arguments are wrong, or on a timeout. Cancel the awaiting task to cancel the call."""
        connection = self._connections.get(server)
        if connection is None:
            return ToolResult(f"There is no server named {server}.", ToolFailure.SERVER)
        if connection.state.status is not ServerStatus.READY:
            return await connection.call(tool, {}, timeout_s)  # says why it is not running
        info = next((t for t in connection.state.tools if t.name == tool), None)
        if info is None:
            names = ", ".join(t.name for t in connection.state.tools) or "none"
            why = f"{server} has no tool named {tool} (its tools: {names})."
            return ToolResult(why, ToolFailure.BAD_ARGUMENTS)
        problem = argument_problem(info, arguments)
        if problem is not None:
            return ToolResult(problem, ToolFailure.BAD_ARGUMENTS)
        assert isinstance(arguments, dict)
        return await connection.call(tool, arguments, timeout_s)

    async def restart(self, name: str) -> ServerState | None:
        connection = self._connections.get(name)
        return None if connection is None else await connection.restart()

    async def stop(self, name: str) -> None:
        connection = self._connections.get(name)
        if connection is not None:
            await connection.stop()

    async def close(self) -> None:
        """Stop every server, side by side (each within its bound)."""
        await asyncio.gather(*(c.stop() for c in self._connections.values()))

    async def apply(self, config: McpConfig) -> None:
        """Follow an edited config: servers removed or changed are stopped, new and changed
        ones are set up, and started if enabled once `start_enabled` has been called."""
        for name, connection in list(self._connections.items()):
            if config.servers.get(name) != connection.spec:
                await connection.stop()
                del self._connections[name]
        for spec in config.servers.values():
            if spec.name not in self._connections:
                self._connections[spec.name] = connection = self._connection(spec)
                if self._autostart and (spec.enabled or spec.problem is not None):
                    connection.start()

    def _connection(self, spec: ServerSpec) -> ServerConnection:
        log_path = None if self._log_dir is None else self._log_dir / log_name(spec.name)
        return ServerConnection(spec, log_path=log_path, on_change=self._on_change, **self._options)


def log_name(server: str) -> str:
    """A file name for the server's stderr log, distinct for distinct server names."""
    safe = _NOT_FILE_NAME.sub("_", server)[:60]
    if safe != server:
        safe += "-" + hashlib.sha256(server.encode()).hexdigest()[:6]
    return f"{safe}.log"


def argument_problem(tool: ToolInfo, arguments: object) -> str | None:
    """Why `arguments` do not fit the tool's schema (the first, clearest reason), or None. A
    schema the server got wrong is not held against the call: the server checks too."""
    if not isinstance(arguments, dict):
        kind = type(arguments).__name__
        return f"The arguments of {tool.name} must be a JSON object, not {kind}."
    try:
        validator_class = validator_for(tool.input_schema, default=jsonschema.Draft202012Validator)
        validator_class.check_schema(tool.input_schema)
        error = best_match(validator_class(tool.input_schema).iter_errors(arguments))
    except (jsonschema.SchemaError, UnknownType, RecursionError):
        return None
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"Bad arguments for {tool.name}: " + (f"{where}: " if where else "") + error.message
