"""Tool use for the window: the MCP servers of `<data>/mcp.json` on the app's asyncio loop, the
remembered approvals, and the tool loop (`app.chat.tools.flow`), with what the window shows of
them as plain values.

A server starts only once the person has seen its command line: one that was never started
(just imported, say) waits for Start in Preferences › Tools; after that, enabled servers start
with the app, in the background, never blocking the window.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from app.chat.knowledge.tools import KNOWLEDGE_TOOLS
from app.chat.tools.choice import server_label
from app.mcp.approvals import APPROVALS_NAME, Approval, ToolApprovals
from app.mcp.config import BUILTIN_SERVER, CONFIG_NAME, McpConfig, load_config, save_config
from app.mcp.config_import import available_sources, merge_servers
from app.mcp.launch import display_command
from app.mcp.tool_info import ServerState, ServerStatus

if TYPE_CHECKING:
    from app.mcp.servers import ToolServers

_log = logging.getLogger(__name__)
_LOOP_WAIT_MS = 50
# At quit, how long the servers get to close side by side (the window is gone by then). The
# SDK ends a stdio server by closing its input, then SIGTERM, then SIGKILL, about 6 s at worst.
QUIT_CLOSE_S = 6.0


@dataclass(frozen=True)
class ServerInfo:
    """A server as Preferences and the tools button show it."""

    name: str
    label: str
    status: ServerStatus
    command: str
    enabled: bool
    tools: tuple[str, ...]
    error: str | None
    stderr_tail: tuple[str, ...]
    never_started: bool


class ToolSession(QObject):
    serversChanged = Signal()  # a status, the list of servers or the approvals changed
    notice = Signal(str)

    def __init__(
        self,
        data_dir: Path,
        loop: Callable[[], asyncio.AbstractEventLoop | None],
        started_before: Callable[[], set[str]],
        mark_started: Callable[[str], None],
        parent: QObject | None = None,
    ) -> None:
        """`started_before()` names the servers the person has started once;
        `mark_started(name)` adds one."""
        super().__init__(parent)
        self._config_path = data_dir / CONFIG_NAME
        self._loop = loop
        self._started_before = started_before
        self._mark_started = mark_started
        config, problem = load_config(self._config_path)
        self.config: McpConfig = config
        self.approvals = ToolApprovals(data_dir / APPROVALS_NAME)
        self._log_dir = data_dir / "logs" / "mcp"
        self._servers: ToolServers | None = None
        self.load_notice = problem or self.approvals.notice

    @property
    def servers(self) -> ToolServers:
        """The connections, made when first needed (the MCP SDK loads then, not at start-up)."""
        if self._servers is None:
            from app.mcp.servers import ToolServers

            self._servers = ToolServers(
                self.config, log_dir=self._log_dir, on_change=self._on_state
            )
        return self._servers

    @property
    def running_servers(self) -> ToolServers | None:
        """The connections, if any server was ever started."""
        return self._servers

    def close_at_quit(self, timeout_s: float = QUIT_CLOSE_S) -> None:
        """Stop every running server's connection once Qt's loop has ended, running the asyncio
        loop for it: a stdio server that ignores the end of its input must not outlive the app,
        and an HTTP server's session is ended rather than left to expire."""
        loop = self._loop()
        if self._servers is None or loop is None or loop.is_closed() or loop.is_running():
            return
        try:
            loop.run_until_complete(asyncio.wait_for(self._servers.close(), timeout_s))
        except TimeoutError:
            _log.warning(
                "Tool servers still closing after %.0f s were left to the system.", timeout_s
            )

    def start(self) -> None:
        """Start the enabled servers the person has started before, in the background, once
        the app's asyncio loop runs; returns at once."""
        if self._to_start():
            self._start_known()

    def _to_start(self) -> list[str]:
        known = self._started_before()
        return [s.name for s in self.config.servers.values() if s.enabled and s.name in known]

    def _start_known(self) -> None:
        loop = self._loop()
        if loop is None or not loop.is_running():
            # Connections belong to the running loop, which the window starts after its first
            # paint: ask again shortly.
            QTimer.singleShot(_LOOP_WAIT_MS, self._start_known)
            return
        for name in self._to_start():
            connection = self.servers.connection(name)
            if connection is not None:
                connection.start()

    async def close(self) -> None:
        if self._servers is not None:
            await self._servers.close()

    # --- what the window shows -----------------------------------------------------------------

    def server_infos(self) -> list[ServerInfo]:
        known = self._started_before()
        states = {s.name: s for s in (self._servers.states() if self._servers else [])}
        infos = []
        for spec in self.config.servers.values():
            state = states.get(spec.name, ServerState(spec.name, ServerStatus.STOPPED))
            infos.append(
                ServerInfo(
                    spec.name,
                    spec.name,
                    state.status,
                    display_command(spec) if spec.problem is None else spec.problem,
                    spec.enabled,
                    tuple(t.name for t in state.tools),
                    state.error or spec.problem,
                    state.stderr_tail,
                    spec.name not in known,
                )
            )
        return infos

    def builtin_info(self, knowledge: bool = False) -> ServerInfo:
        """The built-in tools as the tools button lists them; `knowledge`: with the knowledge
        tools (a chat that reads knowledge)."""
        return ServerInfo(
            BUILTIN_SERVER,
            server_label(BUILTIN_SERVER),
            ServerStatus.READY,
            "",
            True,
            (
                "search_conversations",
                *(tuple(t.name for t in KNOWLEDGE_TOOLS) if knowledge else ()),
            ),
            None,
            (),
            False,
        )

    def approval_list(self) -> list[Approval]:
        return self.approvals.approvals()

    def import_sources(self) -> list[tuple[str, str]]:
        return [(s.app, str(s.path)) for s in available_sources()]

    # --- changes -------------------------------------------------------------------------------

    def set_enabled(self, name: str, enabled: bool) -> None:
        spec = self.config.servers.get(name)
        if spec is None or spec.enabled == enabled:
            return
        self.config.servers[name] = spec.with_enabled(enabled)
        self._save_and_apply()

    def restart(self, name: str) -> None:
        """Start (the first time, once its command line was shown) or restart a server."""
        if name not in self.config.servers:
            return
        self._mark_started(name)
        self._run(self.servers.restart(name))
        self.serversChanged.emit()

    def import_from(self, path: str) -> None:
        try:
            report = merge_servers(self.config, Path(path))
        except (OSError, ValueError) as exc:
            self.notice.emit(f"Could not import servers from {path}: {exc}")
            return
        self._save_and_apply()
        self.notice.emit(
            report.summary()
            + (
                " Check each new server's command in Preferences › Tools, then Start it."
                if report.added
                else ""
            )
        )

    def revoke(self, approval: Approval) -> None:
        self.approvals.revoke(approval)
        self.serversChanged.emit()

    def _save_and_apply(self) -> None:
        try:
            save_config(self._config_path, self.config)
        except OSError as exc:
            self.notice.emit(f"The MCP servers file could not be saved: {exc}")
        self._run(self._apply(self.config))
        self.serversChanged.emit()

    def _run(self, work: Coroutine[Any, Any, Any]) -> None:
        loop = self._loop()
        if loop is None:
            work.close()
            self.notice.emit("Branchwise is still starting; try again in a moment.")
            return
        loop.create_task(work)

    async def _apply(self, config: McpConfig) -> None:
        await self.servers.apply(config)
        self._start_known()
        self.serversChanged.emit()

    def _on_state(self, _state: ServerState) -> None:
        self.serversChanged.emit()


def approval_text(approval: Approval, chat_title: Callable[[int], str | None]) -> str:
    where = "in every chat"
    if approval.chat_id is not None:
        title = chat_title(approval.chat_id)
        where = f"in the chat “{title}”" if title else f"in chat {approval.chat_id}"
    return f"{approval.tool} on {server_label(approval.server)}, {where}"
