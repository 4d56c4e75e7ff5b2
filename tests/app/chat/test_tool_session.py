"""The window's tool session: a server starts by itself only once the person has started it
(after seeing its command line), imports from another app's config add servers that wait for
Start, enabling and disabling is saved in mcp.json, and what Preferences shows."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from app.chat.tools.session import ToolSession
from tests.app.mcp.fixture_launch import FIXTURE, LIFETIME_S

LIMIT_S = 30
ENTRY = {
    "command": sys.executable,
    "args": [str(FIXTURE), "--lifetime", str(LIFETIME_S)],
    "env": {"API_KEY": "secret-value"},
}


class Started:
    def __init__(self, names: set[str]) -> None:
        self.names = set(names)

    def __call__(self) -> set[str]:
        return set(self.names)

    def mark(self, name: str) -> None:
        self.names.add(name)


def _session(folder: Path, loop: asyncio.AbstractEventLoop, started: Started) -> ToolSession:
    return ToolSession(folder, lambda: loop, started, started.mark)


async def _until(session: ToolSession, check: Any) -> None:
    """Wait for a change of the servers after which `check()` holds."""
    if check():
        return
    done = asyncio.get_running_loop().create_future()

    def hit() -> None:
        if not done.done() and check():
            done.set_result(None)

    session.serversChanged.connect(hit)
    try:
        await asyncio.wait_for(done, LIMIT_S)
    finally:
        session.serversChanged.disconnect(hit)


def test_a_server_never_started_waits_for_start(tmp_path: Path, qt_asyncio_loop) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"fx": ENTRY}}))
    started = Started(set())
    session = _session(tmp_path, qt_asyncio_loop, started)
    session.start()
    (info,) = session.server_infos()
    assert info.never_started and info.status == "stopped"
    assert "API_KEY=•••" in info.command and "secret-value" not in info.command
    assert session.running_servers is None  # the MCP SDK is not even loaded for it

    async def start() -> None:
        session.restart("fx")
        await _until(session, lambda: session.server_infos()[0].status == "ready")
        await session.close()

    qt_asyncio_loop.run_until_complete(start())
    assert started.names == {"fx"}


def test_servers_started_before_start_with_the_app(tmp_path: Path, qt_asyncio_loop) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"fx": ENTRY}}))
    session = _session(tmp_path, qt_asyncio_loop, Started({"fx"}))

    async def run() -> tuple[str, ...]:
        session.start()
        await _until(session, lambda: session.server_infos()[0].status == "ready")
        tools = session.server_infos()[0].tools
        await session.close()
        return tools

    assert "add" in qt_asyncio_loop.run_until_complete(run())


def test_import_and_enable_are_saved(tmp_path: Path, qt_asyncio_loop) -> None:
    other = tmp_path / "claude_desktop_config.json"
    other.write_text(json.dumps({"mcpServers": {"fx": ENTRY, "broken": {"args": []}}}))
    data = tmp_path / "data"
    data.mkdir()
    session = _session(data, qt_asyncio_loop, Started(set()))
    notices: list[str] = []
    session.notice.connect(notices.append)

    async def run() -> None:
        session.import_from(str(other))
        session.set_enabled("fx", False)
        await session.close()

    qt_asyncio_loop.run_until_complete(run())
    assert "1 added" in notices[0] and "skipped broken" in notices[0]
    assert "then Start it" in notices[0]
    saved = json.loads((data / "mcp.json").read_text())
    assert saved["mcpServers"]["fx"]["enabled"] is False
    assert [(i.name, i.enabled, i.never_started) for i in session.server_infos()] == [
        ("fx", False, True)
    ]
