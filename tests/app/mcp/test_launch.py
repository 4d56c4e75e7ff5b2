"""Starting stdio servers: the login shell's PATH (asked once, under a time limit), finding
the command with advice when it is missing, and the command line shown with secrets masked."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from app.mcp.config import parse_entry
from app.mcp.launch import (
    MASK,
    CommandNotFoundError,
    display_command,
    merge_paths,
    resolve_command,
    shell_path,
)


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body, "utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_the_login_shells_path_is_read_past_its_greeting(tmp_path: Path) -> None:
    # A stand-in shell: prints a greeting, then runs the command with a PATH of its own.
    shell = _script(
        tmp_path / "fake-shell",
        'echo "Welcome!"\nPATH=/opt/fake/bin:/usr/bin\neval "$2"\necho "bye"\n',
    )
    assert shell_path(str(shell)) == "/opt/fake/bin:/usr/bin"


def test_a_shell_that_hangs_or_is_missing_gives_no_path_in_time(tmp_path: Path) -> None:
    shell = _script(tmp_path / "slow-shell", "sleep 30\n")
    started = time.monotonic()
    assert shell_path(str(shell), timeout_s=0.5) is None
    assert time.monotonic() - started < 5  # a hang, not the 0.5 s wait: ten times it
    assert shell_path(str(tmp_path / "no-such-shell")) is None


def test_paths_are_merged_without_repeats() -> None:
    merged = merge_paths("/a:/b", "/b:/c:", None).split(os.pathsep)
    assert merged[:3] == ["/a", "/b", "/c"] and len(merged) == len(set(merged))


def test_a_command_is_found_on_the_given_path(tmp_path: Path) -> None:
    tool = _script(tmp_path / "npx", "exit 0\n")
    assert resolve_command("npx", f"/nowhere{os.pathsep}{tmp_path}") == str(tool)
    assert resolve_command(str(tool), "") == str(tool)


def test_a_missing_command_says_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(CommandNotFoundError, match=r"`npx` was not found.*Install Node\.js"):
        resolve_command("npx", str(tmp_path))
    with pytest.raises(CommandNotFoundError, match="Install uv"):
        resolve_command("uvx", str(tmp_path))
    with pytest.raises(CommandNotFoundError, match="does not exist"):
        resolve_command(str(tmp_path / "gone"), "")


def test_the_command_line_shows_everything_but_secret_values() -> None:
    stdio = parse_entry(
        "s", {"command": "npx", "args": ["-y", "server x"], "env": {"API_KEY": "sk-secret-1"}}
    )
    shown = display_command(stdio)
    assert shown == f"API_KEY={MASK} npx -y 'server x'" and "sk-secret" not in shown
    http = parse_entry(
        "h", {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer sk-secret-2"}}
    )
    shown = display_command(http)
    assert "https://example.com/mcp" in shown and "Authorization" in shown
    assert "sk-secret" not in shown
