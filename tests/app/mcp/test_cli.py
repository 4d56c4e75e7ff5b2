"""`branchwise tools` as a script runs it, in its own process: what it prints, and the exit
code and single line it gives for each kind of failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.store.conversations import Store
from tests.app.mcp.fixture_launch import FIXTURE, LIFETIME_S

ROOT = Path(__file__).resolve().parents[3]


def _tools(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("QT_QPA_PLATFORM", None)  # no display is needed
    return subprocess.run(
        [sys.executable, "-m", "ui.entry", "tools", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def config(tmp_path: Path) -> Path:
    fixture = [str(FIXTURE), "--lifetime", str(LIFETIME_S)]
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "fx": {
                        "command": sys.executable,
                        "args": fixture,
                        "timeout": 10,
                        "env": {"FIXTURE_TOKEN": "very-secret"},
                    },
                    "off": {"command": sys.executable, "args": fixture, "enabled": False},
                }
            }
        ),
        "utf-8",
    )
    return path


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    return done.stderr.strip()


def test_list_shows_each_server_and_its_tools(config: Path) -> None:
    done = _tools("list", "--config", str(config))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("fx  (ready, ") and "FIXTURE_TOKEN=•••" in lines[0]
    assert "very-secret" not in done.stdout
    assert "  add  Add two whole numbers." in lines
    assert lines[-1].startswith("off  (disabled)")


def test_list_as_json_and_a_failed_server(config: Path, tmp_path: Path) -> None:
    data = json.loads(config.read_text("utf-8"))
    data["mcpServers"]["crash"] = {"command": sys.executable, "args": [str(FIXTURE), "--crash"]}
    config.write_text(json.dumps(data), "utf-8")
    done = _tools("list", "--config", str(config), "--json")
    assert done.returncode == 1
    rows = {row["server"]: row for row in json.loads(done.stdout)}
    assert rows["fx"]["status"] == "ready"
    assert {"name": "add", "model_name": "fx__add"}.items() <= rows["fx"]["tools"][0].items()
    assert rows["crash"]["status"] == "failed"
    assert rows["crash"]["stderr_tail"][-1] == "fixture: FIXTURE_KEY is not set"
    assert rows["off"]["status"] == "disabled"


def test_a_call_prints_its_result(config: Path) -> None:
    done = _tools("call", "fx", "add", "--args", '{"a": 19, "b": 23}', "--config", str(config))
    assert (done.returncode, done.stdout, done.stderr) == (0, "42\n", "")


@pytest.mark.parametrize(
    ("args", "code", "reason"),
    [
        (
            ["fail", "--args", '{"message": "no\\nsecond line"}'],
            1,
            "fx/fail: Error executing tool fail: no",
        ),
        (
            ["sleep", "--args", '{"seconds": 30}', "--timeout", "0.5"],
            3,
            "fx/sleep: sleep on fx did not answer within 0.5 s; the call was cancelled.",
        ),
        (
            ["add", "--args", '{"a": 1}'],
            2,
            "fx/add: Bad arguments for add: 'b' is a required property",
        ),
        (["add", "--args", "{a: 1}"], 2, "--args is not valid JSON"),
        (["add", "--args", "[1, 2]"], 2, "--args must be a JSON object"),
        (["nothing", "--args", "{}"], 2, "fx/nothing: fx has no tool named nothing"),
    ],
    ids=["tool-error", "timeout", "bad-arguments", "not-json", "not-object", "unknown-tool"],
)
def test_a_failed_call_exits_with_one_line(
    config: Path, args: list[str], code: int, reason: str
) -> None:
    done = _tools("call", "fx", *args, "--config", str(config))
    assert done.returncode == code
    assert _one_line(done).startswith(f"branchwise tools: {reason}")


def test_servers_that_cannot_be_called(config: Path, tmp_path: Path) -> None:
    unknown = _tools("call", "nope", "add", "--config", str(config))
    assert unknown.returncode == 2 and "There is no server named nope (servers: fx, off)" in (
        _one_line(unknown)
    )
    disabled = _tools("call", "off", "add", "--config", str(config))
    assert disabled.returncode == 2 and "is disabled" in _one_line(disabled)
    broken = tmp_path / "broken.json"
    broken.write_text("{nope", "utf-8")
    unreadable = _tools("list", "--config", str(broken))
    assert unreadable.returncode == 2 and "is not valid JSON" in _one_line(unreadable)
    assert broken.read_text("utf-8") == "{nope"  # the command line never moves a file


def test_the_builtin_search_in_a_data_folder(tmp_path: Path) -> None:
    with Store.open(tmp_path / "conversations.sqlite3") as store:
        chat = store.create_conversation("Garden")
        store.append_message(chat.id, None, "user", "When do tomatoes ripen?")
    listed = _tools("list", "--data-dir", str(tmp_path), "--json")
    assert listed.returncode == 0
    assert json.loads(listed.stdout) == [
        {
            "server": "branchwise",
            "status": "built-in",
            "command": None,
            "error": None,
            "stderr_tail": [],
            "tools": [json.loads(listed.stdout)[0]["tools"][0]],
        }
    ]
    found = _tools(
        "call",
        "branchwise",
        "search_conversations",
        "--args",
        '{"query": "tomatoes"}',
        "--data-dir",
        str(tmp_path),
    )
    assert found.returncode == 0 and found.stdout.startswith("1 match for 'tomatoes':\n1. ")
