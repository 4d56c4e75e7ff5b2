"""Fixtures for the MCP tests: the fixture server over Streamable HTTP on a free loopback port,
and an asyncio loop kept for a whole module so one server can serve several tests."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.app.mcp.fixture_launch import FIXTURE, LIFETIME_S, Runner, free_port


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """The fixture server over Streamable HTTP, for the module."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(FIXTURE), "--http", str(port), "--lifetime", str(LIFETIME_S)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            assert process.poll() is None, "the HTTP fixture server exited"
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            assert time.monotonic() < deadline, "the HTTP fixture server did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)


@pytest.fixture(scope="module")
def module_loop() -> Iterator[Runner]:
    """Runs coroutines on one loop kept for the module (connections belong to their loop)."""
    loop = asyncio.new_event_loop()
    try:
        yield loop.run_until_complete
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
