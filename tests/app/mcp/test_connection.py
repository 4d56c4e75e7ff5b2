"""One server over stdio, as the window and the CLI use it: it starts in the background, its
tools are called, a slow call times out or is cancelled, and a server that crashes or hangs
becomes a clear status with its last output, never a wait that does not end."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.mcp import connection as connection_module
from app.mcp import launch
from app.mcp.config import parse_entry
from app.mcp.connection import ServerConnection
from app.mcp.results import ToolFailure
from app.mcp.tool_info import ServerState, ServerStatus
from tests.app.mcp.fixture_launch import Runner, fixture_spec
from tests.app.mcp.fixture_server import SHIFTY_FIRST


@pytest.fixture(scope="module")
def ready(module_loop: Runner) -> Iterator[ServerConnection]:
    """The fixture server over stdio, started once for the module's read-only tests."""
    connection = ServerConnection(fixture_spec())
    module_loop(_start(connection))
    yield connection
    module_loop(connection.stop())


async def _start(connection: ServerConnection) -> ServerState:
    connection.start()
    return await connection.wait_started()


def test_a_started_server_lists_its_tools(ready: ServerConnection) -> None:
    assert ready.state.status is ServerStatus.READY
    tools = {t.name: t for t in ready.state.tools}
    assert {"add", "sleep", "fail", "huge", "picture", "shifty"} <= set(tools)
    assert tools["add"].description == "Add two whole numbers."
    assert tools["add"].input_schema["required"] == ["a", "b"]
    assert tools["add"].model_name == "fx__add"


def test_calls_return_text_and_tool_errors_say_why(
    ready: ServerConnection, module_loop: Runner
) -> None:
    added = module_loop(ready.call("add", {"a": 2, "b": 40}))
    assert (added.text, added.is_error) == ("42", False) and added.duration_s > 0
    failed = module_loop(ready.call("fail", {"message": "the disk is full"}))
    assert failed.failure is ToolFailure.TOOL and "the disk is full" in failed.text
    picture = module_loop(ready.call("picture", {}))
    assert picture.text == "a pixel:\n\n[image: image/png, 69 B; not shown to the model]"


def test_a_slow_call_times_out_and_the_server_stays_usable(
    ready: ServerConnection, module_loop: Runner
) -> None:
    started = time.monotonic()
    slow = module_loop(ready.call("sleep", {"seconds": 30}, timeout_s=0.5))
    assert slow.failure is ToolFailure.TIMEOUT and "did not answer within 0.5 s" in slow.text
    assert time.monotonic() - started < 5  # far below the 30 s the tool would take
    assert module_loop(ready.call("add", {"a": 1, "b": 1})).text == "2"
    module_loop(_logged(ready, "fixture: sleep 30.0 cancelled"))  # the server was told


def test_cancelling_the_awaiting_task_cancels_the_call(
    ready: ServerConnection, module_loop: Runner
) -> None:
    async def cancel_soon() -> float:
        task = asyncio.ensure_future(ready.call("sleep", {"seconds": 31}))
        await asyncio.sleep(0.3)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert module_loop(cancel_soon()) < 3  # far below the 31 s the tool would take
    assert module_loop(ready.call("add", {"a": 2, "b": 2})).text == "4"
    module_loop(_logged(ready, "fixture: sleep 31.0 cancelled"))  # the server was told


async def _logged(connection: ServerConnection, line: str) -> None:
    for _ in range(50):
        if line in connection.stderr_tail():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{line!r} not in {connection.stderr_tail()}")


def test_calls_run_side_by_side(ready: ServerConnection, module_loop: Runner) -> None:
    async def both() -> tuple[float, list[str]]:
        started = time.monotonic()
        results = await asyncio.gather(
            ready.call("sleep", {"seconds": 1}), ready.call("sleep", {"seconds": 1})
        )
        return time.monotonic() - started, [r.text for r in results]

    elapsed, texts = module_loop(both())
    assert texts == ["slept 1.0", "slept 1.0"] and elapsed < 1.9  # one after the other: 2 s


def test_a_server_that_crashes_at_start_fails_with_its_last_output(tmp_path: Path) -> None:
    seen: list[ServerStatus] = []
    log = tmp_path / "logs" / "crash.log"
    connection = ServerConnection(
        fixture_spec("crash", "--crash"), log_path=log, on_change=lambda s: seen.append(s.status)
    )

    async def run() -> ServerState:
        connection.start()
        return await connection.wait_started()

    state = asyncio.run(run())
    assert state.status is ServerStatus.FAILED and "closed the connection" in (state.error or "")
    assert state.stderr_tail[-1] == "fixture: FIXTURE_KEY is not set"
    assert seen == [ServerStatus.STARTING, ServerStatus.FAILED]
    assert "FIXTURE_KEY is not set" in log.read_text("utf-8")
    result = asyncio.run(connection.call("add", {"a": 1, "b": 2}))
    assert result.failure is ToolFailure.SERVER and "FIXTURE_KEY" not in result.text
    assert "failed: The server closed the connection" in result.text


def test_a_server_that_hangs_at_start_never_blocks_the_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(connection_module, "MIN_START_S", 1.0)  # not the usual 10 s floor
    connection = ServerConnection(fixture_spec("hang", "--hang", timeout=1))

    async def run() -> tuple[float, float, ServerState]:
        started = time.monotonic()
        connection.start()
        returned = time.monotonic() - started
        # The loop keeps running other work while the server hangs.
        ticks = 0
        while connection.state.status is ServerStatus.STARTING and ticks < 300:
            await asyncio.sleep(0.1)
            ticks += 1
        return returned, time.monotonic() - started, connection.state

    returned, failed_after, state = asyncio.run(run())
    assert returned < 0.1
    assert state.status is ServerStatus.FAILED and state.error == (
        "The server did not start within 1 s."
    )
    # A deadline for a hang: ten times the 3 s the timeout and the SDK's bounded shutdown of
    # the process take here.
    assert failed_after < 30


def test_a_server_whose_calls_time_out_quickly_still_gets_time_to_start() -> None:
    connection = ServerConnection(fixture_spec("slow", "--slow-start", "2", timeout=1))

    async def run() -> tuple[ServerState, str]:
        connection.start()
        state = await connection.wait_started()
        slow = await connection.call("sleep", {"seconds": 30})
        await connection.stop()
        return state, slow.text

    state, slow = asyncio.run(run())
    assert state.status is ServerStatus.READY, state.error  # 2 s to start, 1 s per call
    assert "did not answer within 1 s" in slow


def test_a_server_still_starting_can_be_stopped() -> None:
    connection = ServerConnection(fixture_spec("hang", "--hang", timeout=60))

    async def run() -> float:
        connection.start()
        await asyncio.sleep(0.5)
        started = time.monotonic()
        await connection.stop()
        return time.monotonic() - started

    # Ten times the SDK's bounded shutdown (2 s here), still well short of the 60 s start
    # timeout it must not wait out.
    assert asyncio.run(run()) < 20
    assert connection.state.status is ServerStatus.STOPPED


def test_a_missing_command_fails_with_advice() -> None:
    connection = ServerConnection(parse_entry("gone", {"command": "npx-not-installed-here"}))
    state = asyncio.run(_start(connection))
    assert state.status is ServerStatus.FAILED
    assert "`npx-not-installed-here` was not found on your PATH" in (state.error or "")


def test_an_unusable_entry_fails_at_once_without_running_anything() -> None:
    connection = ServerConnection(parse_entry("bad", {"args": ["x"]}))
    state = asyncio.run(_start(connection))
    assert state.status is ServerStatus.FAILED and 'either a "command"' in (state.error or "")


def test_a_crash_while_running_is_noticed_and_restart_brings_it_back() -> None:
    connection = ServerConnection(fixture_spec(), health_check_s=0.2)

    async def run() -> tuple[ServerState, str, ServerState]:
        await _start(connection)
        pid = int((await connection.call("pid", {})).text)
        os.kill(pid, signal.SIGKILL)
        for _ in range(50):  # noticed while idle, by the health check
            if connection.state.status is not ServerStatus.READY:
                break
            await asyncio.sleep(0.1)
        crashed = connection.state
        dead_call = await connection.call("add", {"a": 1, "b": 2})
        restarted = await connection.restart()
        added = await connection.call("add", {"a": 1, "b": 2})
        await connection.stop()
        return crashed, dead_call.text + "|" + added.text, restarted

    crashed, texts, restarted = asyncio.run(run())
    assert crashed.status is ServerStatus.FAILED
    assert "closed the connection" in (crashed.error or "")
    dead, added = texts.split("|")
    assert "is failed" in dead and added == "3"
    assert restarted.status is ServerStatus.READY and restarted.tools


def test_a_call_cut_off_by_a_crash_gets_an_error_result() -> None:
    connection = ServerConnection(fixture_spec())

    async def run() -> tuple[str, ServerStatus]:
        await _start(connection)
        pid = int((await connection.call("pid", {})).text)
        call = asyncio.ensure_future(connection.call("sleep", {"seconds": 30}))
        await asyncio.sleep(0.3)
        os.kill(pid, signal.SIGKILL)
        result = await asyncio.wait_for(call, 5)
        await asyncio.sleep(0.2)
        status = connection.state.status
        await connection.stop()
        return result.text, status

    text, status = asyncio.run(run())
    assert "closed the connection during the call to sleep" in text
    assert status is ServerStatus.FAILED


def test_stop_ends_the_server_and_later_calls_say_so() -> None:
    connection = ServerConnection(fixture_spec())

    async def run() -> tuple[float, str]:
        await _start(connection)
        started = time.monotonic()
        await connection.stop()
        stopped_in = time.monotonic() - started
        return stopped_in, (await connection.call("add", {"a": 1, "b": 2})).text

    stopped_in, text = asyncio.run(run())
    assert connection.state.status is ServerStatus.STOPPED and stopped_in < 5
    assert text == "The server fx is stopped"


def test_a_changed_description_is_seen_after_listing_again() -> None:
    connection = ServerConnection(fixture_spec())

    async def run() -> tuple[str, str]:
        await _start(connection)
        before = next(t for t in connection.state.tools if t.name == "shifty")
        await connection.call("change_description", {"text": "Now it deletes files."})
        await connection.refresh_tools()
        after = next(t for t in connection.state.tools if t.name == "shifty")
        await connection.stop()
        return before.description, after.description

    assert asyncio.run(run()) == (SHIFTY_FIRST, "Now it deletes files.")


def test_it_runs_on_the_qt_event_loop(
    qt_asyncio_loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launch, "_cached", None)  # the login shell is asked off the Qt thread
    connection = ServerConnection(fixture_spec())

    async def run() -> str:
        await _start(connection)
        try:
            return (await connection.call("add", {"a": 20, "b": 22})).text
        finally:
            await connection.stop()

    assert qt_asyncio_loop.run_until_complete(run()) == "42"
    assert connection.state.status is ServerStatus.STOPPED
