"""The servers file: the `mcpServers` format, entries that cannot be used, and files that
cannot be read, which are never lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.mcp.config import (
    DEFAULT_TIMEOUT_S,
    McpConfigError,
    load_config,
    read_config,
    save_config,
)

GOOD = {
    "mcpServers": {
        "time": {
            "command": "uvx",
            "args": ["mcp-server-time"],
            "env": {"TZ": "UTC", "N": 3},
            "cwd": "/tmp",
            "note": "kept",
        },
        "docs": {
            "url": "https://example.com/mcp",
            "headers": {"Authorization": "Bearer x"},
            "enabled": False,
            "timeout": 120,
        },
    },
    "otherKey": {"kept": True},
}


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, "utf-8")
    return path


def test_stdio_and_http_entries_are_read_with_defaults(tmp_path: Path) -> None:
    config = read_config(_write(tmp_path / "mcp.json", GOOD))
    time, docs = config.servers["time"], config.servers["docs"]
    assert (time.transport, time.command, time.args) == ("stdio", "uvx", ("mcp-server-time",))
    assert time.env == {"TZ": "UTC", "N": "3"} and time.cwd == "/tmp"
    assert time.enabled and time.timeout_s == DEFAULT_TIMEOUT_S and time.problem is None
    assert (docs.transport, docs.url, docs.headers) == (
        "http",
        "https://example.com/mcp",
        {"Authorization": "Bearer x"},
    )
    assert not docs.enabled and docs.timeout_s == 120


def test_a_missing_file_means_no_servers(tmp_path: Path) -> None:
    assert read_config(tmp_path / "mcp.json").servers == {}


def test_saving_keeps_what_branchwise_does_not_know(tmp_path: Path) -> None:
    path = _write(tmp_path / "mcp.json", GOOD)
    config = read_config(path)
    config.servers["docs"] = config.servers["docs"].with_enabled(True)
    config.servers["time"] = config.servers["time"].with_enabled(False)
    save_config(path, config)
    saved = json.loads(path.read_text("utf-8"))
    assert saved["otherKey"] == {"kept": True}
    assert saved["mcpServers"]["time"]["note"] == "kept"
    assert saved["mcpServers"]["time"]["enabled"] is False
    assert "enabled" not in saved["mcpServers"]["docs"]
    assert saved["mcpServers"]["docs"]["timeout"] == 120
    assert read_config(path).servers["docs"].enabled


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ({"args": ["x"]}, 'either a "command"'),
        ({"command": "a", "url": "http://b"}, 'either a "command"'),
        ({"command": ""}, '"command" must be non-empty'),
        ({"command": "a", "args": "not a list"}, '"args" must be a list'),
        ({"command": "a", "env": {"K": ["v"]}}, "must be text"),
        ({"command": "a", "timeout": 0}, '"timeout" must be between'),
        ({"command": "a", "timeout": "60"}, "number of seconds"),
        ({"command": "a", "enabled": "yes"}, "true or false"),
        ({"url": "ftp://host/mcp"}, "must start with http"),
        ({"url": "http://host/sse", "type": "sse"}, "SSE servers are not supported"),
        ({"url": "http://host/mcp", "type": "stdio"}, "type 'stdio' cannot have a \"url\""),
        ({"command": "a", "type": "http"}, "type 'http' cannot have a \"command\""),
        ({"command": "a", "type": "websocket"}, "Unknown server type 'websocket'"),
        ("uvx thing", "must be an object"),
    ],
)
def test_an_unusable_entry_says_why_and_is_written_back_as_it_was(
    tmp_path: Path, entry: object, reason: str
) -> None:
    path = _write(tmp_path / "mcp.json", {"mcpServers": {"bad": entry, "ok": {"command": "a"}}})
    config = read_config(path)
    bad = config.servers["bad"]
    assert bad.problem is not None and reason in bad.problem
    assert not bad.enabled and config.servers["ok"].problem is None
    save_config(path, config)
    assert json.loads(path.read_text("utf-8"))["mcpServers"]["bad"] == entry


def test_the_builtin_tools_name_is_taken(tmp_path: Path) -> None:
    config = read_config(
        _write(tmp_path / "mcp.json", {"mcpServers": {"branchwise": {"command": "a"}}})
    )
    assert "built-in" in (config.servers["branchwise"].problem or "")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"mcpServers": {"a": {"command": "x",}}}', "not valid JSON: Expecting property name"),
        ("[1, 2]", "must hold a JSON object, not a list"),
        ('{"mcpServers": ["a"]}', '"mcpServers" must be an object'),
        ("\udcff", "could not be read"),
    ],
)
def test_an_unreadable_file_gives_a_clear_reason_and_is_never_lost(
    tmp_path: Path, text: str, reason: str
) -> None:
    path = tmp_path / "mcp.json"
    data = text.encode("utf-8", "surrogateescape")
    path.write_bytes(data)
    with pytest.raises(McpConfigError, match=r"mcp\.json") as raised:
        read_config(path)
    assert reason in str(raised.value)
    assert path.read_bytes() == data  # reading alone never touches it

    config, notice = load_config(path)
    assert config.servers == {} and notice is not None and reason in notice
    (aside,) = tmp_path.glob("mcp.json.unreadable-*")
    assert aside.read_bytes() == data and aside.name in notice
    assert not path.exists()


def test_saving_over_an_unreadable_file_sets_it_aside_first(tmp_path: Path) -> None:
    path = _write(tmp_path / "mcp.json", "{broken")
    config = read_config(_write(tmp_path / "other.json", GOOD))
    save_config(path, config)
    (aside,) = tmp_path.glob("mcp.json.unreadable-*")
    assert aside.read_text("utf-8") == "{broken"
    assert set(read_config(path).servers) == {"time", "docs"}
