"""The same fixture server over Streamable HTTP on loopback: listed, called, timed out, and a
server that is not there fails with a clear reason."""

from __future__ import annotations

import asyncio
import time

from app.mcp.config import parse_entry
from app.mcp.connection import ServerConnection
from app.mcp.results import ToolFailure
from app.mcp.tool_info import ServerStatus
from tests.app.mcp.fixture_launch import free_port


def test_a_server_over_http_is_listed_and_called(http_url: str) -> None:
    spec = parse_entry("web", {"url": http_url, "headers": {"X-Test": "1"}, "timeout": 10})
    connection = ServerConnection(spec)

    async def run() -> tuple[list[str], str, str, float]:
        connection.start()
        state = await connection.wait_started()
        added = await connection.call("add", {"a": 5, "b": 6})
        started = time.monotonic()
        slow = await connection.call("sleep", {"seconds": 30}, timeout_s=0.5)
        waited = time.monotonic() - started
        await connection.stop()
        return sorted(t.name for t in state.tools), added.text, slow.failure, waited

    names, added, slow_failure, waited = asyncio.run(run())
    assert {"add", "sleep", "fail"} <= set(names)
    assert added == "11" and slow_failure is ToolFailure.TIMEOUT and waited < 5
    assert connection.state.status is ServerStatus.STOPPED


def test_nothing_listening_fails_with_the_address() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    connection = ServerConnection(parse_entry("none", {"url": url, "timeout": 5}))

    async def run() -> None:
        connection.start()
        await connection.wait_started()

    asyncio.run(run())
    assert connection.state.status is ServerStatus.FAILED
    assert connection.state.error is not None
    assert connection.state.error.startswith(f"Could not connect to {url}")


def test_a_wrong_path_fails_with_the_servers_answer(http_url: str) -> None:
    url = http_url.replace("/mcp", "/nothing-here")
    connection = ServerConnection(parse_entry("wrong", {"url": url, "timeout": 5}))

    async def run() -> None:
        connection.start()
        await connection.wait_started()

    asyncio.run(run())
    assert connection.state.status is ServerStatus.FAILED
    assert "Not Found" in (connection.state.error or "")
