"""How the tests start the fixture server: an entry running it over stdio, and a free loopback
port for it over Streamable HTTP."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from app.mcp.config import ServerSpec, parse_entry

FIXTURE = Path(__file__).with_name("fixture_server.py")
LIFETIME_S = 60  # a fixture server outliving a killed test run ends itself after this
Runner = Callable[[Coroutine[Any, Any, Any]], Any]


def fixture_spec(name: str = "fx", *flags: str, timeout: float = 10, **extra: Any) -> ServerSpec:
    """An entry that runs the fixture server over stdio."""
    entry = {
        "command": sys.executable,
        "args": [str(FIXTURE), *flags, "--lifetime", str(LIFETIME_S)],
        "timeout": timeout,
        **extra,
    }
    spec = parse_entry(name, entry)
    assert spec.problem is None, spec.problem
    return spec


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
