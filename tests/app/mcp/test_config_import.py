"""Importing servers from Claude Desktop, LM Studio and Cursor: new ones are added, a name
already taken by a different entry is reported and left alone, the source is never changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.mcp.config import McpConfigError, parse_entry, read_config
from app.mcp.config_import import available_sources, candidate_sources, merge_servers

CLAUDE = {
    "mcpServers": {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"],
        },
        "time": {"command": "uvx", "args": ["mcp-server-time"]},
    },
    "preferences": {"quickEntry": True},
}
LM_STUDIO = {
    "mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time", "--x"]},
        "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer k"}},
    }
}
CURSOR = {
    "mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time"]},
        "broken": {"args": ["no command"]},
    }
}


def _place(home: Path) -> None:
    files = {
        home / "Library/Application Support/Claude/claude_desktop_config.json": CLAUDE,
        home / ".lmstudio/mcp.json": LM_STUDIO,
        home / ".cursor/mcp.json": CURSOR,
    }
    for path, data in files.items():
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(data), "utf-8")


def test_each_apps_file_is_found_where_it_keeps_it(tmp_path: Path) -> None:
    _place(tmp_path)
    found = available_sources(tmp_path, platform="darwin")
    assert [s.app for s in found] == ["Claude Desktop", "LM Studio", "Cursor"]
    linux = {s.app: s.path for s in candidate_sources(tmp_path, platform="linux")}
    assert linux["Claude Desktop"] == tmp_path / ".config/Claude/claude_desktop_config.json"
    windows = candidate_sources(tmp_path, platform="win32", appdata=str(tmp_path / "Roaming"))
    assert windows[0].path == tmp_path / "Roaming/Claude/claude_desktop_config.json"


def test_importing_all_three_merges_and_reports_clashes(tmp_path: Path) -> None:
    _place(tmp_path)
    config = read_config(tmp_path / "mcp.json")
    config.servers["filesystem"] = parse_entry("filesystem", {"command": "my-own-fs"})
    reports = [merge_servers(config, s.path) for s in available_sources(tmp_path, "darwin")]

    claude, lm_studio, cursor = reports
    assert (claude.added, claude.clashes) == (["time"], ["filesystem"])
    assert (lm_studio.added, lm_studio.clashes) == (["remote"], ["time"])
    assert (cursor.added, cursor.unchanged) == ([], ["time"])
    assert 'either a "command"' in cursor.skipped["broken"]
    assert config.servers["filesystem"].command == "my-own-fs"  # ours is kept
    assert config.servers["time"].args == ("mcp-server-time",)  # the first one imported
    assert config.servers["remote"].headers == {"Authorization": "Bearer k"}
    assert "kept yours for time" in lm_studio.summary()
    source = tmp_path / ".lmstudio/mcp.json"
    assert json.loads(source.read_text("utf-8")) == LM_STUDIO


@pytest.mark.parametrize("text", ["{not json", '{"mcpServers": 3}'])
def test_an_unreadable_source_is_refused_and_left_alone(tmp_path: Path, text: str) -> None:
    source = tmp_path / "claude_desktop_config.json"
    source.write_text(text, "utf-8")
    config = read_config(tmp_path / "mcp.json")
    with pytest.raises(McpConfigError, match=r"claude_desktop_config\.json"):
        merge_servers(config, source)
    assert config.servers == {} and source.read_text("utf-8") == text


def test_a_missing_source_is_refused(tmp_path: Path) -> None:
    with pytest.raises(McpConfigError, match="does not exist"):
        merge_servers(read_config(tmp_path / "mcp.json"), tmp_path / "nothing.json")
