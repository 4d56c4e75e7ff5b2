"""The tools button by the composer: which servers and tools this chat may use, chosen per chat
from a menu (each server with its tools listed under it). For a model whose chat template takes
no tools it is disabled and says why. Server and tool names come from config files and servers:
shown as plain text (menu text escapes `&`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from app.mcp.tool_info import ServerStatus
from ui.text.plain_text import literal, menu_text

_MAX_TOOLS_LISTED = 12


@dataclass(frozen=True)
class ServerChoice:
    """A server as the button lists it: its label, state, tools, and whether the chat uses it."""

    name: str
    label: str
    status: ServerStatus
    tools: tuple[str, ...]
    chosen: bool


class ToolsButton(QToolButton):
    serversChosen = Signal(list)  # the names of the servers the chat may use now

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ToolsButton")
        self.setAccessibleName("Tools")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self._menu = QMenu(self)
        self._menu.setObjectName("ToolsMenu")
        self.setMenu(self._menu)
        self._servers: list[ServerChoice] = []
        self.set_servers([], off_reason="No model is loaded.")

    @property
    def servers(self) -> list[ServerChoice]:
        return list(self._servers)

    def set_servers(self, servers: Sequence[ServerChoice], off_reason: str | None = None) -> None:
        """Show these servers; `off_reason` disables the button and says why."""
        self._servers = list(servers)
        self._menu.clear()
        for server in self._servers:
            self._add_server(server)
        if not self._servers:
            empty = self._menu.addAction("No tools are set up (Preferences › Tools).")
            empty.setEnabled(False)
        tools = sum(
            len(s.tools) for s in self._servers if s.chosen and s.status == ServerStatus.READY
        )
        # A count only where the model is offered them: a template without tools gets none.
        self.setText(f"Tools · {tools}" if tools and off_reason is None else "Tools")
        self.setEnabled(off_reason is None)
        if off_reason is not None:
            self.setToolTip(literal(off_reason))
            self.setAccessibleDescription(off_reason)
        else:
            chosen = [s.label for s in self._servers if s.chosen]
            tip = (
                ("This chat may use: " + ", ".join(chosen))
                if chosen
                else "This chat uses no tools."
            )
            self.setToolTip(literal(tip))
            self.setAccessibleDescription(tip)

    def _add_server(self, server: ServerChoice) -> None:
        state = "" if server.status == ServerStatus.READY else f" ({server.status})"
        action = QAction(menu_text(server.label + state), self._menu)
        action.setCheckable(True)
        action.setChecked(server.chosen)
        action.setData(server.name)
        action.toggled.connect(self._on_toggled)
        self._menu.addAction(action)
        for tool in server.tools[:_MAX_TOOLS_LISTED]:
            item = self._menu.addAction(menu_text(f"    {tool}"))
            item.setEnabled(False)
        if len(server.tools) > _MAX_TOOLS_LISTED:
            more = self._menu.addAction(f"    and {len(server.tools) - _MAX_TOOLS_LISTED} more")
            more.setEnabled(False)

    def _on_toggled(self, _checked: bool) -> None:
        names = [a.data() for a in self._menu.actions() if a.isCheckable() and a.isChecked()]
        self._servers = [
            ServerChoice(s.name, s.label, s.status, s.tools, s.name in names) for s in self._servers
        ]
        self.serversChosen.emit(names)
