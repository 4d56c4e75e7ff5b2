"""Every configured server together: the enabled ones start in the background, tools are
listed in a stable order and found by the name a model uses, arguments are checked before a
call leaves, config edits are followed, and approvals follow a tool's description."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.mcp.approvals import ToolApprovals
from app.mcp.config import McpConfig, parse_entry
from app.mcp.results import ToolFailure
from app.mcp.servers import ToolServers, log_name
from app.mcp.tool_info import ServerStatus
from tests.app.mcp.fixture_launch import fixture_spec
from tests.app.mcp.fixture_server import SHIFTY_FIRST


def _config(*specs) -> McpConfig:
    return McpConfig({s.name: s for s in specs})


def test_enabled_servers_start_and_their_tools_are_listed_in_order(tmp_path: Path) -> None:
    config = _config(
        fixture_spec("zeta"),
        fixture_spec("alpha"),
        fixture_spec("broken", "--crash"),
        fixture_spec("off").with_enabled(False),
        parse_entry("typo", {"comand": "x"}),
    )
    servers = ToolServers(config, log_dir=tmp_path)

    async def run() -> dict[str, ServerStatus]:
        servers.start_enabled()
        states = await servers.wait_started()
        try:
            return {s.name: s.status for s in states}
        finally:
            await servers.close()

    assert asyncio.run(run()) == {
        "zeta": ServerStatus.READY,
        "alpha": ServerStatus.READY,
        "broken": ServerStatus.FAILED,
        "off": ServerStatus.STOPPED,
        "typo": ServerStatus.FAILED,
    }
    assert (tmp_path / "broken.log").read_text("utf-8").endswith("FIXTURE_KEY is not set\n")
    assert log_name("a/b c") != log_name("a_b_c") and "/" not in log_name("a/b c")


def test_calls_are_routed_and_bad_arguments_never_leave() -> None:
    servers = ToolServers(_config(fixture_spec("fx")))

    async def run() -> dict[str, object]:
        servers.start_enabled()
        await servers.wait_started()
        try:
            tools = servers.tools()
            found = servers.find("fx__add")
            return {
                "names": [t.model_name for t in tools],
                "found": found.name if found else None,
                "schema": found.openai_schema()["function"]["name"] if found else None,
                "ok": (await servers.call("fx", "add", {"a": 1, "b": 2})).text,
                "missing": await servers.call("fx", "add", {"a": 1}),
                "wrong_type": await servers.call("fx", "add", {"a": "one", "b": 2}),
                "not_object": await servers.call("fx", "add", [1, 2]),
                "no_tool": await servers.call("fx", "subtract", {}),
                "no_server": await servers.call("nope", "add", {}),
            }
        finally:
            await servers.close()

    out = asyncio.run(run())
    assert out["names"] == sorted(out["names"]) and "fx__add" in out["names"]
    assert (out["found"], out["schema"], out["ok"]) == ("add", "fx__add", "3")
    assert out["missing"].failure is ToolFailure.BAD_ARGUMENTS
    assert out["missing"].text == "Bad arguments for add: 'b' is a required property"
    assert out["wrong_type"].text == "Bad arguments for add: a: 'one' is not of type 'integer'"
    assert "must be a JSON object, not list" in out["not_object"].text
    assert out["no_tool"].failure is ToolFailure.BAD_ARGUMENTS
    assert "no tool named subtract" in out["no_tool"].text and "add" in out["no_tool"].text
    assert out["no_server"].text == "There is no server named nope."


def test_config_edits_stop_removed_servers_and_start_new_ones() -> None:
    servers = ToolServers(_config(fixture_spec("old")))

    async def run() -> tuple[list[str], ServerStatus, str]:
        servers.start_enabled()
        await servers.wait_started()
        old = servers.connection("old")
        assert old is not None
        await servers.apply(_config(fixture_spec("new")))
        await servers.wait_started()
        try:
            added = await servers.call("new", "add", {"a": 2, "b": 2})
            return [s.name for s in servers.states()], old.state.status, added.text
        finally:
            await servers.close()

    names, old_status, added = asyncio.run(run())
    assert names == ["new"] and old_status is ServerStatus.STOPPED and added == "4"


def test_a_changed_description_asks_again(tmp_path: Path) -> None:
    approvals = ToolApprovals(tmp_path / "tool_approvals.json")
    servers = ToolServers(_config(fixture_spec("fx")))

    async def run() -> tuple[bool, bool, str | None]:
        servers.start_enabled()
        await servers.wait_started()
        try:
            shifty = servers.find("fx__shifty")
            assert shifty is not None
            approvals.approve(shifty, chat_id=None)
            before = approvals.is_approved(shifty, chat_id=7)
            await servers.call("fx", "change_description", {"text": "Also reads your mail."})
            connection = servers.connection("fx")
            assert connection is not None
            await connection.refresh_tools()
            changed = servers.find("fx__shifty")
            assert changed is not None
            old = approvals.changed_since_approval(changed, chat_id=7)
            return before, approvals.is_approved(changed, 7), old.description if old else None
        finally:
            await servers.close()

    before, after, old_description = asyncio.run(run())
    assert before and not after and old_description == SHIFTY_FIRST
