"""The tool loop against the fixture MCP server (a real stdio process) on the app's kind of loop
(qasync): approve → result → the model goes on; deny; "always" remembered; edited arguments
make a sibling; a branch switch runs nothing; the call limit; Cancel; a crashed server.

The model's side is played by the test: `continue_reply` records where the model would go on,
and the test writes the reply that "ends with calls" itself.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import SignalInstance

from app.chat.tools.flow import DENIED_TEXT, ToolFlow
from app.chat.tools.payloads import CallLimit, ToolCallCard
from app.chat.tools.runs import CANCELLED_TEXT, ToolRunner
from app.mcp.approvals import ToolApprovals
from app.mcp.config import McpConfig
from app.mcp.servers import ToolServers
from app.store.conversations import Store
from app.store.records import Message
from tests.app.mcp.fixture_launch import fixture_spec

LIMIT_S = 30


class Chat:
    """A store, the fixture server and a flow, for one test."""

    def __init__(
        self, folder: Path, loop: asyncio.AbstractEventLoop, max_calls: int = 8, timeout: float = 10
    ) -> None:
        self.loop = loop
        self.store = Store.open(folder / "chat.sqlite3")
        self.servers = ToolServers(McpConfig({"fx": fixture_spec("fx", timeout=timeout)}))
        self.approvals = ToolApprovals(folder / "tool_approvals.json")
        self.continued: list[tuple[int, int]] = []
        self.flow = ToolFlow(
            self.store,
            ToolRunner(self.store, lambda: self.servers, lambda: loop),
            self.approvals,
            continue_reply=self._continue,
            max_calls=lambda: max_calls,
            context_tokens=lambda cid: 4096,
        )
        self.cid = self.store.create_conversation("tools").id
        self._handed_over: asyncio.Future[None] | None = None

    def _continue(self, conversation_id: int, parent_id: int) -> bool:
        """Where the controller would start the model's next reply."""
        self.continued.append((conversation_id, parent_id))
        if self._handed_over is not None and not self._handed_over.done():
            self._handed_over.set_result(None)
        return True

    def reply_with_calls(self, parent_id: int | None, *calls: tuple[str, dict[str, Any]]) -> int:
        """The model's reply ending with `calls`, under `parent_id` (None: a new question)."""
        if parent_id is None:
            parent_id = self.store.append_message(self.cid, None, "user", "Please help").id
        reply = self.store.begin_reply(self.cid, parent_id, "tiny")
        entries = [
            {"id": f"c{reply.id}_{i}", "name": name, "arguments": args}
            for i, (name, args) in enumerate(calls)
        ]
        self.store.finish_reply(
            reply.id, "", tool_calls=entries, stats={"finish_reason": "tool_calls"}
        )
        return reply.id

    def path(self) -> list[tuple[str, str]]:
        return [(m.role, m.content) for m in self.store.active_path(self.cid)]

    def waiting(self) -> str | None:
        """What the chat's card waits for: "approval", "running", "limit", or None."""
        pending = self.flow.pending(self.cid)
        if pending is None:
            return None
        return "limit" if isinstance(pending, CallLimit) else pending.waiting

    async def after(
        self,
        sig: SignalInstance,
        action: Callable[[], None],
        check: Callable[[Any], bool] = lambda _: True,
    ) -> Any:
        """Do `action` and wait for `sig`'s next emission that passes `check`."""
        found: asyncio.Future[Any] = self.loop.create_future()

        def hit(payload: Any = None) -> None:
            if not found.done() and check(payload):
                found.set_result(payload)

        sig.connect(hit)
        try:
            action()
            return await asyncio.wait_for(found, LIMIT_S)
        finally:
            sig.disconnect(hit)

    async def continuation(self, action: Callable[[], None]) -> None:
        """Do `action`; wait until the flow hands over to the model."""
        self._handed_over = self.loop.create_future()
        action()
        await asyncio.wait_for(self._handed_over, LIMIT_S)


def _one_approved_call(
    chat: Chat, run: Callable[..., Any], tool: str, arguments: dict[str, Any]
) -> Message:
    """On a chat of the test's own making: start its server, let the model call `tool`, approve
    it; the chat's last message (the result) once the model is handed the turn again."""

    async def scenario() -> None:
        chat.servers.start_enabled()
        await chat.servers.wait_started(LIMIT_S)
        reply = chat.reply_with_calls(None, (tool, arguments))
        await chat.after(
            chat.flow.approvalNeeded, lambda: chat.flow.reply_finished(chat.cid, reply)
        )
        await chat.continuation(lambda: chat.flow.approve(chat.cid))
        await chat.servers.close()

    try:
        run(scenario())
        return chat.store.active_path(chat.cid)[-1]
    finally:
        chat.store.close()


@pytest.fixture
def run(qt_asyncio_loop: asyncio.AbstractEventLoop) -> Callable[..., Any]:
    def runner(coro: Coroutine[Any, Any, Any]) -> Any:
        return qt_asyncio_loop.run_until_complete(asyncio.wait_for(coro, 3 * LIMIT_S))

    return runner


@pytest.fixture
def chat(
    tmp_path: Path, qt_asyncio_loop: asyncio.AbstractEventLoop, run: Callable[..., Any]
) -> Iterator[Chat]:
    made = Chat(tmp_path, qt_asyncio_loop)

    async def start() -> None:
        made.servers.start_enabled()
        await made.servers.wait_started(LIMIT_S)

    run(start())
    yield made
    run(made.servers.close())
    made.store.close()


def test_approve_runs_the_call_and_the_model_goes_on(chat: Chat, run) -> None:
    async def scenario() -> None:
        reply = chat.reply_with_calls(None, ("fx__add", {"a": 2, "b": 3}))
        asked = await chat.after(
            chat.flow.approvalNeeded, lambda: chat.flow.reply_finished(chat.cid, reply)
        )
        assert (asked.server, asked.tool, asked.arguments) == ("fx", "add", {"a": 2, "b": 3})
        assert asked.description == "Add two whole numbers."
        assert chat.waiting() == "approval"
        assert chat.path()[-1][0] == "assistant"  # nothing ran before Run
        await chat.continuation(lambda: chat.flow.approve(chat.cid))

    run(scenario())
    *_, result = chat.store.active_path(chat.cid)
    assert (result.role, result.content, result.status) == ("tool", "5", "complete")
    assert result.stats["server"] == "fx" and result.stats["tool"] == "add"
    assert result.stats["duration_s"] > 0 and result.stats["chars"] == 1
    assert chat.continued == [(chat.cid, result.id)]
    assert chat.flow.pending(chat.cid) is None


def test_deny_stores_a_refusal_and_the_model_goes_on(chat: Chat, run) -> None:
    async def scenario() -> None:
        reply = chat.reply_with_calls(None, ("fx__add", {"a": 1, "b": 1}))
        await chat.after(
            chat.flow.approvalNeeded, lambda: chat.flow.reply_finished(chat.cid, reply)
        )
        await chat.continuation(lambda: chat.flow.deny(chat.cid))

    run(scenario())
    result = chat.store.active_path(chat.cid)[-1]
    assert (result.role, result.content, result.status) == ("tool", DENIED_TEXT, "error")
    assert result.stats["failure"] == "denied"
    assert len(chat.continued) == 1


def test_always_for_this_tool_in_this_chat_is_remembered(chat: Chat, run) -> None:
    async def scenario() -> None:
        reply = chat.reply_with_calls(None, ("fx__add", {"a": 1, "b": 2}))
        await chat.after(
            chat.flow.approvalNeeded, lambda: chat.flow.reply_finished(chat.cid, reply)
        )
        await chat.continuation(lambda: chat.flow.approve(chat.cid, remember="chat"))
        # The model calls it again: it runs without asking.
        asked: list[Any] = []
        chat.flow.approvalNeeded.connect(asked.append)
        second = chat.reply_with_calls(chat.continued[-1][1], ("fx__add", {"a": 4, "b": 4}))
        await chat.continuation(lambda: chat.flow.reply_finished(chat.cid, second))
        assert asked == []

    run(scenario())
    assert chat.path()[-1] == ("tool", "8")
    assert [a.chat_id for a in ToolApprovals(chat.approvals._path).approvals()] == [chat.cid]


def test_edited_arguments_make_a_sibling_and_earlier_results_are_kept(chat: Chat, run) -> None:
    async def scenario() -> int:
        reply = chat.reply_with_calls(
            None, ("fx__add", {"a": 1, "b": 1}), ("fx__add", {"a": 2, "b": 2})
        )
        await chat.after(
            chat.flow.approvalNeeded, lambda: chat.flow.reply_finished(chat.cid, reply)
        )
        await chat.after(chat.flow.approvalNeeded, lambda: chat.flow.approve(chat.cid))
        await chat.continuation(lambda: chat.flow.approve(chat.cid, {"a": 20, "b": 2}))
        return reply

    original = run(scenario())
    _, reply, first, second = chat.store.active_path(chat.cid)
    assert reply.id != original and reply.parent_id == chat.store.get_message(original).parent_id
    assert reply.tool_calls[1]["arguments"] == {"a": 20, "b": 2}
    assert (first.content, second.content) == ("2", "22")
    assert first.stats["reused_from"]  # copied from the first branch, not run again
    siblings, index = chat.store.siblings(reply.id)
    assert [m.id for m in siblings] == [original, reply.id] and index == 1


def test_switching_branches_runs_nothing_again(chat: Chat, run) -> None:
    async def scenario() -> None:
        reply = chat.reply_with_calls(None, ("fx__pid", {}))
        await chat.after(
            chat.flow.approvalNeeded, lambda: chat.flow.reply_finished(chat.cid, reply)
        )
        await chat.continuation(lambda: chat.flow.approve(chat.cid))

    run(scenario())
    *_, reply, result = chat.store.active_path(chat.cid)
    user = chat.store.active_path(chat.cid)[0]
    other = chat.store.edit_message(user.id, "Something else")
    chat.store.switch_to_sibling(user.id)
    assert chat.store.active_path(chat.cid)[-1].id == result.id
    chat.store.switch_to_sibling(other.id)
    chat.store.switch_to_sibling(reply.id)
    # Switching is a store change only: no call asked, none running, no new result.
    assert chat.flow.pending(chat.cid) is None
    assert [m.id for m in chat.store.children(reply.id)] == [result.id]


def test_a_call_repeated_with_the_same_arguments_is_asked_about_even_under_always(
    chat: Chat, run
) -> None:
    async def scenario() -> None:
        chat.approvals.approve(chat.servers.find("fx__add"), None)
        asked: list[Any] = []
        chat.flow.approvalNeeded.connect(asked.append)
        first = chat.reply_with_calls(None, ("fx__add", {"a": 1, "b": 2}))
        await chat.continuation(lambda: chat.flow.reply_finished(chat.cid, first))
        assert asked == []  # "always": it ran without asking
        # The model asks for the very same call again: going round in circles, so it asks.
        again = chat.reply_with_calls(chat.continued[-1][1], ("fx__add", {"a": 1, "b": 2}))
        await chat.after(
            chat.flow.approvalNeeded, lambda: chat.flow.reply_finished(chat.cid, again)
        )
        pending = chat.flow.pending(chat.cid)
        assert asked[-1].repeated is True and isinstance(pending, ToolCallCard) and pending.repeated
        await chat.continuation(lambda: chat.flow.approve(chat.cid))
        # Other arguments are a new call: "always" runs it.
        other = chat.reply_with_calls(chat.continued[-1][1], ("fx__add", {"a": 5, "b": 5}))
        await chat.continuation(lambda: chat.flow.reply_finished(chat.cid, other))
        # After the person writes again, the first call is new again.
        fresh = chat.reply_with_calls(None, ("fx__add", {"a": 1, "b": 2}))
        await chat.continuation(lambda: chat.flow.reply_finished(chat.cid, fresh))
        assert len(asked) == 1

    run(scenario())
    assert chat.path()[-1] == ("tool", "3")


def test_the_call_limit_waits_for_continue(tmp_path: Path, qt_asyncio_loop, run) -> None:
    chat = Chat(tmp_path, qt_asyncio_loop, max_calls=2)

    async def scenario() -> None:
        chat.servers.start_enabled()
        await chat.servers.wait_started(LIMIT_S)
        chat.approvals.approve(chat.servers.find("fx__add"), None)
        reply = chat.reply_with_calls(None, *[("fx__add", {"a": i, "b": 0}) for i in range(3)])
        limit = await chat.after(
            chat.flow.limitReached, lambda: chat.flow.reply_finished(chat.cid, reply)
        )
        assert (limit.count, limit.limit) == (2, 2)
        assert chat.waiting() == "limit" and chat.continued == []
        await chat.continuation(lambda: chat.flow.continue_past_limit(chat.cid))
        await chat.servers.close()

    try:
        run(scenario())
        assert [c for r, c in chat.path() if r == "tool"] == ["0", "1", "2"]
    finally:
        chat.store.close()


def test_a_sleeping_call_is_cancelled(chat: Chat, run) -> None:
    async def scenario() -> None:
        reply = chat.reply_with_calls(None, ("fx__sleep", {"seconds": 60}))
        await chat.after(
            chat.flow.approvalNeeded, lambda: chat.flow.reply_finished(chat.cid, reply)
        )
        await chat.after(chat.flow.callRunning, lambda: chat.flow.approve(chat.cid))
        assert chat.waiting() == "running"
        await chat.continuation(lambda: chat.flow.cancel(chat.cid))

    run(scenario())
    result = chat.store.active_path(chat.cid)[-1]
    assert (result.content, result.status) == (CANCELLED_TEXT, "error")
    assert result.stats["failure"] == "cancelled"


def test_a_crashing_server_gives_an_error_result(chat: Chat, run) -> None:
    async def scenario() -> None:
        reply = chat.reply_with_calls(None, ("fx__pid", {}))
        await chat.after(
            chat.flow.approvalNeeded, lambda: chat.flow.reply_finished(chat.cid, reply)
        )
        await chat.continuation(lambda: chat.flow.approve(chat.cid))
        pid = int(chat.store.active_path(chat.cid)[-1].content)
        second = chat.reply_with_calls(chat.continued[-1][1], ("fx__sleep", {"seconds": 60}))
        await chat.after(
            chat.flow.approvalNeeded, lambda: chat.flow.reply_finished(chat.cid, second)
        )
        await chat.after(chat.flow.callRunning, lambda: chat.flow.approve(chat.cid))
        await chat.continuation(lambda: os.kill(pid, signal.SIGKILL))

    run(scenario())
    result = chat.store.active_path(chat.cid)[-1]
    assert result.status == "error" and result.stats["failure"] == "server_error"
    assert "server" in result.content.lower()


def test_a_huge_result_is_capped_with_a_marker(tmp_path: Path, qt_asyncio_loop, run) -> None:
    chat = Chat(tmp_path, qt_asyncio_loop)
    chat.flow._context_tokens = lambda cid: 1000  # a quarter: 1,000 characters
    result = _one_approved_call(chat, run, "fx__huge", {"chars": 50_000})
    assert len(result.content) <= 1000
    assert result.content.startswith("HEAD") and result.content.endswith("TAIL")
    assert "characters cut" in result.content
    assert result.stats["chars"] == 50_000 and result.stats["cut"] == 50_000 - len(result.content)


def test_an_unknown_tool_is_an_error_result_without_asking(chat: Chat, run) -> None:
    async def scenario() -> None:
        reply = chat.reply_with_calls(None, ("fx__no_such_tool", {}))
        await chat.continuation(lambda: chat.flow.reply_finished(chat.cid, reply))

    run(scenario())
    result = chat.store.active_path(chat.cid)[-1]
    assert result.status == "error" and "no tool named fx__no_such_tool" in result.content


def test_rerun_and_edited_results_are_siblings_and_later_results_are_kept(chat: Chat, run) -> None:
    async def scenario() -> None:
        chat.approvals.approve(chat.servers.find("fx__add"), None)
        reply = chat.reply_with_calls(
            None, ("fx__add", {"a": 1, "b": 1}), ("fx__add", {"a": 2, "b": 2})
        )
        await chat.continuation(lambda: chat.flow.reply_finished(chat.cid, reply))
        first = chat.store.active_path(chat.cid)[2]  # user, reply, first result, second
        await chat.continuation(lambda: chat.flow.rerun(first.id))
        again = chat.store.active_path(chat.cid)[2]
        await chat.continuation(lambda: chat.flow.edit_result(again.id, "3"))

    run(scenario())
    _, reply, edited, second = chat.store.active_path(chat.cid)
    assert (edited.content, edited.stats["edited"], second.content) == ("3", True, "4")
    assert second.stats["reused_from"]  # the second call did not run again
    results = chat.store.children(reply.id)
    assert [m.content for m in results] == ["2", "2", "3"]
    assert len(chat.continued) == 3


def test_a_call_past_its_servers_timeout_is_an_error_result(
    tmp_path: Path, qt_asyncio_loop, run
) -> None:
    chat = Chat(tmp_path, qt_asyncio_loop, timeout=1)
    result = _one_approved_call(chat, run, "fx__sleep", {"seconds": 30})
    assert result.status == "error" and result.stats["failure"] == "timeout"
    assert "did not answer within 1 s" in result.content


def test_calls_left_without_results_are_asked_about_again_when_the_chat_opens(
    chat: Chat, run
) -> None:
    """The app quit while asking (or the person stopped the loop): opening the chat asks again,
    even for a tool allowed "always", and nothing runs until the person says so."""

    async def scenario() -> None:
        chat.approvals.approve(chat.servers.find("fx__add"), None)
        reply = chat.reply_with_calls(None, ("fx__add", {"a": 2, "b": 5}))
        asked = await chat.after(chat.flow.approvalNeeded, lambda: chat.flow.resume(chat.cid))
        assert asked.reply_id == reply and chat.continued == []
        chat.flow.resume(chat.cid)  # opened again while asking: still one question
        assert chat.waiting() == "approval"
        await chat.continuation(lambda: chat.flow.approve(chat.cid))
        chat.flow.resume(chat.cid)  # every call has its result now: nothing to ask
        assert chat.flow.pending(chat.cid) is None

    run(scenario())
    assert chat.path()[-1] == ("tool", "7")
