"""The controller's tool loop end to end: the real worker with a scripted model whose template
takes tools, the fixture MCP server over stdio, the store. A reply that calls a tool is stored
with its call, asks, runs on Run, stores the result and the model goes on below it with the call
and the result in its prompt."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import SignalInstance

from app.chat.controller import ChatController
from app.chat.tools.payloads import ToolCallCard
from app.generation.worker_events import GenerationFinished
from app.settings import Preferences
from app.store.conversations import Store
from tests.app.mcp.fixture_launch import FIXTURE, LIFETIME_S
from tests.tool_engine import ToolScriptedEngine, call_markup, tool_worker

LIMIT_S = 30


async def _next(
    loop: asyncio.AbstractEventLoop,
    signal: SignalInstance,
    action: Callable[[], Any],
    check: Callable[..., bool] = lambda *a: True,
) -> Any:
    """Do `action`, then wait for `signal` to carry what `check` accepts."""
    found: asyncio.Future[Any] = loop.create_future()

    def hit(*args: Any) -> None:
        if not found.done() and check(*args):
            found.set_result(args[0] if len(args) == 1 else args)

    signal.connect(hit)
    try:
        action()
        return await asyncio.wait_for(found, LIMIT_S)
    finally:
        signal.disconnect(hit)


@pytest.fixture
def setup(qtbot, tmp_path: Path, qt_asyncio_loop) -> Iterator[Callable[[list[str]], Any]]:
    made: list[ChatController] = []

    def make(replies: list[str]) -> tuple[ChatController, ToolScriptedEngine]:
        entry = {"command": sys.executable, "args": [str(FIXTURE), "--lifetime", str(LIFETIME_S)]}
        (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"fx": entry}}))
        preferences = Preferences(tmp_path / "settings.ini")
        preferences.mark_tool_server_started("fx")
        engine = ToolScriptedEngine(replies)
        worker = tool_worker(engine)
        ctl = ChatController(
            Store.open(tmp_path / "chat.sqlite3"),
            worker,
            preferences,
            lambda progress: tmp_path / "model",
        )
        made.append(ctl)

        async def start() -> None:
            await _next(qt_asyncio_loop, worker.modelLoaded, ctl.start)
            await ctl.tool_session.servers.wait_started(LIMIT_S)

        qt_asyncio_loop.run_until_complete(start())
        return ctl, engine

    yield make
    for ctl in made:
        qt_asyncio_loop.run_until_complete(ctl.tool_session.servers.close())
        ctl.shutdown()


def test_a_call_is_approved_run_and_the_model_goes_on(setup, qt_asyncio_loop) -> None:
    ctl, engine = setup([f"Let me add.\n{call_markup('fx__add', a=2, b=3)}", "It is 5."])
    cid = ctl.new_conversation()
    flow = ctl.tool_flow

    async def scenario() -> ToolCallCard:
        asked = await _next(qt_asyncio_loop, flow.approvalNeeded, lambda: ctl.send(cid, "2+3?"))
        await _next(
            qt_asyncio_loop,
            ctl.worker.generationFinished,
            lambda: flow.approve(cid),
            lambda p: not p.tool_calls,
        )
        return asked

    asked = qt_asyncio_loop.run_until_complete(scenario())
    assert (asked.server, asked.tool, asked.arguments) == ("fx", "add", {"a": 2, "b": 3})
    _user, call, result, answer = ctl.store.active_path(cid)
    assert call.content == "Let me add." and call.tool_calls[0]["name"] == "fx__add"
    assert (result.role, result.content) == ("tool", "5")
    assert answer.content == "It is 5." and answer.parent_id == result.id
    offered = {t["function"]["name"] for t in engine.offered[0]}
    assert {"fx__add", "search_conversations"} <= offered
    second_prompt = engine.prompts[1]
    assert second_prompt[-2]["tool_calls"][0]["function"] == {
        "name": "fx__add",
        "arguments": {"a": 2, "b": 3},
    }
    assert second_prompt[-1] == {
        "role": "tool",
        "content": "5",
        "tool_call_id": call.tool_calls[0]["id"],
        "name": "fx__add",
    }


def test_a_streaming_call_shows_its_tool_name(setup, qt_asyncio_loop) -> None:
    ctl, _engine = setup([f"Checking.\n{call_markup('fx__add', a=1, b=1)}"])
    cid = ctl.new_conversation()
    seen: list[dict] = []
    ctl.streamUpdated.connect(seen.append)
    qt_asyncio_loop.run_until_complete(
        _next(qt_asyncio_loop, ctl.tool_flow.approvalNeeded, lambda: ctl.send(cid, "1+1?"))
    )
    calling = [p for p in seen if p.calling is not None]
    assert calling and calling[-1].calling == "fx__add"
    # Only the text before the call ever shows: no marker, not even its first characters.
    assert all("Checking.\n".startswith(p.text) for p in seen)


def test_tools_are_chosen_per_chat(setup, qt_asyncio_loop) -> None:
    ctl, engine = setup(["No tools needed."])
    cid = ctl.new_conversation()
    params = ctl.store.get_conversation(cid).params
    ctl.update_settings(cid, params={**params, "tool_servers": ["branchwise"]})
    qt_asyncio_loop.run_until_complete(
        _next(qt_asyncio_loop, ctl.worker.generationFinished, lambda: ctl.send(cid, "hi"))
    )
    assert [t["function"]["name"] for t in engine.offered[0]] == ["search_conversations"]


def test_a_model_whose_template_takes_no_tools_is_offered_none(
    qtbot, tmp_path: Path, qt_asyncio_loop
) -> None:
    from tests.ui.window_harness import scripted_worker

    engine = ToolScriptedEngine(["Plain."])
    worker = scripted_worker(engine)  # reports no tool format
    ctl = ChatController(
        Store.open(tmp_path / "chat.sqlite3"),
        worker,
        Preferences(tmp_path / "settings.ini"),
        lambda progress: tmp_path / "m",
    )
    try:
        qt_asyncio_loop.run_until_complete(_next(qt_asyncio_loop, worker.modelLoaded, ctl.start))
        cid = ctl.new_conversation()
        qt_asyncio_loop.run_until_complete(
            _next(qt_asyncio_loop, worker.generationFinished, lambda: ctl.send(cid, "hi"))
        )
        assert engine.offered == [[]]
    finally:
        ctl.shutdown()


def test_rerun_makes_a_sibling_and_switching_back_runs_nothing(setup, qt_asyncio_loop) -> None:
    ctl, engine = setup([call_markup("fx__pid"), "First.", "Second."])
    cid = ctl.new_conversation()
    flow = ctl.tool_flow

    def answered(finished: GenerationFinished) -> bool:
        return not finished.tool_calls

    async def scenario() -> None:
        await _next(qt_asyncio_loop, flow.approvalNeeded, lambda: ctl.send(cid, "pid?"))
        await _next(
            qt_asyncio_loop, ctl.worker.generationFinished, lambda: flow.approve(cid), answered
        )
        first = ctl.store.active_path(cid)[-2]
        # Run again: no question (the person asked for it), a sibling result, a new reply.
        await _next(
            qt_asyncio_loop, ctl.worker.generationFinished, lambda: flow.rerun(first.id), answered
        )

    qt_asyncio_loop.run_until_complete(scenario())
    *_, call, second, answer = ctl.store.active_path(cid)
    first, again = ctl.store.children(call.id)
    assert again.id == second.id and first.content == second.content  # the same server
    assert answer.content == "Second." and len(engine.prompts) == 3
    asked: list = []
    flow.approvalNeeded.connect(asked.append)
    flow.callRunning.connect(asked.append)
    ctl.switch_sibling(second.id, -1)
    assert ctl.store.active_path(cid)[-1].content == "First."
    ctl.switch_sibling(first.id, +1)
    assert asked == [] and len(engine.prompts) == 3
    assert len(ctl.store.children(call.id)) == 2


def test_a_new_message_drops_the_question_still_asked(setup, qt_asyncio_loop) -> None:
    ctl, _engine = setup([call_markup("fx__add", a=1, b=2), "Fine, no tools."])
    cid = ctl.new_conversation()
    flow = ctl.tool_flow
    qt_asyncio_loop.run_until_complete(
        _next(qt_asyncio_loop, flow.approvalNeeded, lambda: ctl.send(cid, "1+2?"))
    )
    pending = flow.pending(cid)
    assert isinstance(pending, ToolCallCard) and pending.waiting == "approval"
    qt_asyncio_loop.run_until_complete(
        _next(qt_asyncio_loop, ctl.worker.generationFinished, lambda: ctl.send(cid, "Never mind."))
    )
    assert flow.pending(cid) is None
    assert [m.role for m in ctl.store.active_path(cid)] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]
