"""Preferences › Tools: the MCP servers (status: starting, ready with its tools, failed with the
last lines it wrote; enabled; Restart), each with the command line it runs (environment values
masked) so the person sees it before it first starts; Import from the other apps' config files;
the remembered "always" approvals, each revocable; and how many calls one reply may make.

The page shows plain values the window gives it and asks for changes by signal, so it can stay
open while servers start and fail (`set_servers` refreshes it). Every name, command and error
line came from a file or a server: plain text only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.mcp.tool_info import ServerStatus
from ui.text.plain_text import menu_text, plain_label
from ui.widgets.theme import em, scale_font


@dataclass(frozen=True)
class ServerRow:
    name: str
    status: ServerStatus
    command: str  # as it runs, environment and header values masked
    enabled: bool
    tools: tuple[str, ...] = ()
    error: str | None = None
    stderr_tail: tuple[str, ...] = ()
    never_started: bool = False  # the person has not yet seen it start: Start, not Restart
    built_in: bool = False  # Branchwise's own tools: always there, nothing to start


@dataclass(frozen=True)
class ApprovalRow:
    text: str  # e.g. "get_weather on weather, in every chat"
    description: str  # what the tool said of itself when it was allowed


def status_text(row: ServerRow) -> str:
    if row.status == ServerStatus.READY:
        count = len(row.tools)
        return f"Ready · {count} tool{'s' if count != 1 else ''}"
    if row.status == ServerStatus.FAILED:
        return "Failed" + (f": {row.error}" if row.error else "")
    if row.never_started:
        return "Not started yet: check the command below, then Start."
    names = {ServerStatus.STARTING: "Starting…", ServerStatus.STOPPED: "Stopped"}
    return names.get(row.status, row.status)


class ToolsPage(QWidget):
    enabledChanged = Signal(str, bool)
    restartRequested = Signal(str)  # also the first Start
    importRequested = Signal(str)  # the config file to import from
    revokeRequested = Signal(int)  # the index of the approval in the list shown

    def __init__(
        self, max_calls: int, new_chats: list[str] | None, parent: QWidget | None = None
    ) -> None:
        """`new_chats`: the servers chats that chose none may use (None: all)."""
        super().__init__(parent)
        self.setObjectName("ToolsPage")
        self._new_chats = None if new_chats is None else set(new_chats)
        self.servers_box = QGroupBox("MCP servers")
        self._servers = QVBoxLayout(self.servers_box)
        self._servers.setSpacing(em(self, 0.6))
        self.import_row = QHBoxLayout()
        self.import_row.setSpacing(em(self, 0.4))
        self.approvals_box = QGroupBox("Remembered approvals")
        self._approvals = QVBoxLayout(self.approvals_box)
        self.max_calls = QSpinBox()
        self.max_calls.setAccessibleName("Tool calls per reply")
        self.max_calls.setRange(1, 100)
        self.max_calls.setValue(max_calls)
        limits = QFormLayout()
        limits.addRow("Calls one reply may make before asking:", self.max_calls)
        layout = QVBoxLayout(self)
        layout.addWidget(self.servers_box)
        layout.addLayout(self.import_row)
        layout.addWidget(self.approvals_box)
        layout.addLayout(limits)
        layout.addStretch(1)
        self.server_rows: dict[str, _ServerFrame] = {}
        self.set_servers([])
        self.set_approvals([])

    def set_servers(self, rows: Sequence[ServerRow]) -> None:
        _clear(self._servers)
        self.server_rows = {}
        if not rows:
            self._servers.addWidget(
                plain_label(
                    "No MCP servers are set up. Import them from another app below, or add them to "
                    "mcp.json in the data folder."
                )
            )
        for row in rows:
            chosen = self._new_chats is None or row.name in self._new_chats
            frame = _ServerFrame(row, chosen)
            frame.default_box.toggled.connect(self._remember_new_chats)
            frame.enabled.toggled.connect(
                lambda on, name=row.name: self.enabledChanged.emit(name, on)
            )
            frame.restart.clicked.connect(
                lambda _=False, name=row.name: self.restartRequested.emit(name)
            )
            self.server_rows[row.name] = frame
            self._servers.addWidget(frame)

    def new_chat_servers(self) -> list[str] | None:
        """The servers ticked "In new chats"; None when every one is."""
        if self._new_chats is None:
            return None
        return sorted(self._new_chats)

    def _remember_new_chats(self) -> None:
        ticked = {n for n, f in self.server_rows.items() if f.default_box.isChecked()}
        everyone = ticked == set(self.server_rows)
        self._new_chats = None if everyone else ticked

    def set_import_sources(self, sources: Sequence[tuple[str, str]]) -> None:
        """(app name, config path) for each other app's config found on this machine."""
        _clear(self.import_row)
        for app, path in sources:
            button = QPushButton(menu_text(f"Import from {app}"))
            button.setToolTip(path)
            button.clicked.connect(lambda _=False, p=path: self.importRequested.emit(p))
            self.import_row.addWidget(button)
        self.import_row.addStretch(1)

    def set_approvals(self, rows: Sequence[ApprovalRow]) -> None:
        _clear(self._approvals)
        if not rows:
            self._approvals.addWidget(plain_label("None: every tool asks before it runs."))
        for index, row in enumerate(rows):
            line = QHBoxLayout()
            label = plain_label(row.text)
            label.setToolTip(row.description)
            label.setWordWrap(True)
            revoke = QPushButton("Revoke")
            revoke.setAccessibleName(f"Revoke: {row.text}")
            revoke.clicked.connect(lambda _=False, i=index: self.revokeRequested.emit(i))
            line.addWidget(label, 1)
            line.addWidget(revoke)
            holder = QWidget()
            holder.setLayout(line)
            line.setContentsMargins(0, 0, 0, 0)
            self._approvals.addWidget(holder)


class _ServerFrame(QFrame):
    def __init__(self, row: ServerRow, in_new_chats: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ServerRow")
        self.setProperty("status", row.status.value)  # theme.qss reads it
        name = plain_label("Built-in tools" if row.built_in else row.name)
        scale_font(name, 1.0, bold=True)
        self.status = plain_label(status_text(row))
        self.status.setObjectName("ServerStatus")
        self.status.setProperty("status", row.status.value)
        self.status.setWordWrap(True)
        self.enabled = QCheckBox("Enabled")
        self.enabled.setChecked(row.enabled)
        self.enabled.setAccessibleName(f"{row.name} enabled")
        self.default_box = QCheckBox("In new chats")
        self.default_box.setChecked(in_new_chats)
        self.default_box.setAccessibleName(f"{row.name} in new chats")
        self.default_box.setToolTip("Chats that have not chosen their tools may use this one")
        self.restart = QPushButton("Start" if row.never_started else "Restart")
        self.restart.setAccessibleName(f"{'Start' if row.never_started else 'Restart'} {row.name}")
        top = QHBoxLayout()
        top.addWidget(name)
        top.addWidget(self.status, 1)
        top.addWidget(self.default_box)
        top.addWidget(self.enabled)
        top.addWidget(self.restart)
        self.enabled.setVisible(not row.built_in)
        self.restart.setVisible(not row.built_in)
        self.command = plain_label(row.command)
        self.command.setObjectName("ServerCommand")
        self.command.setWordWrap(True)
        self.command.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(em(self, 0.5), em(self, 0.4), em(self, 0.5), em(self, 0.4))
        layout.setSpacing(em(self, 0.2))
        layout.addLayout(top)
        layout.addWidget(self.command)
        if row.status == ServerStatus.READY and row.tools:
            tools = plain_label("Tools: " + ", ".join(row.tools))
            tools.setObjectName("ServerTools")
            tools.setWordWrap(True)
            layout.addWidget(tools)
        if row.status == ServerStatus.FAILED and row.stderr_tail:
            self.stderr = plain_label("\n".join(row.stderr_tail))
            self.stderr.setObjectName("ServerStderr")
            self.stderr.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            layout.addWidget(self.stderr)


def _clear(layout: QVBoxLayout | QHBoxLayout) -> None:
    while (item := layout.takeAt(0)) is not None:  # None once the layout is empty
        widget = item.widget()
        if widget is not None:
            widget.deleteLater()
