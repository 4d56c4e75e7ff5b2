"""The tool loop on a chat whose model is remote, end to end through the controller: the server
(the fake one of `tests.fake_openai`, streaming calls in vLLM's fragments, and Branchwise's own
server on a tiny model) is offered the chat's tools and its calls are asked about, remembered,
checked for repeats, run and answered exactly as a local model's (the same `ToolFlow`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.chat.controller import ChatController
from app.chat.tools.payloads import ToolCallCard
from app.generation.reply_events import StreamUpdate
from app.generation.worker import InferenceWorker
from app.mcp.tool_info import ToolLabel
from app.remote.connections import Connection, Connections, FileKeys, RemoteModel
from app.settings import Preferences
from app.store.conversations import Store
from tests.app.chat.test_controller_tools import LIMIT_S, _next
from tests.app.mcp.fixture_launch import FIXTURE, LIFETIME_S
from tests.fake_openai import Call, FakeServer, Reply
from tests.remote_servers import until
from tests.server_harness import Served, serving, start_worker
from tests.tiny_models import QWEN_TOOLS_TEMPLATE, with_call_token, with_template

PARAMS = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 32}


class RemoteChat:
    """A controller whose one chat is on `remote:lab/<model>`, with the fixture MCP server
    "fx" when `mcp` is set."""

    def __init__(self, folder: Path, model: str, mcp: bool = True) -> None:
        if mcp:
            entry = {
                "command": sys.executable,
                "args": [str(FIXTURE), "--lifetime", str(LIFETIME_S)],
            }
            (folder / "mcp.json").write_text(json.dumps({"mcpServers": {"fx": entry}}))
        preferences = Preferences(folder / "settings.ini")
        preferences.mark_tool_server_started("fx")
        self.connections = Connections(folder, keys=FileKeys(folder / "keys.json"))
        self.ctl = ChatController(
            Store.open(folder / "chat.sqlite3"),
            InferenceWorker(),
            preferences,
            connections=self.connections,
        )
        self.model = model
        self.cid = self.ctl.new_conversation()
        self.streamed: list[StreamUpdate] = []
        self.ctl.streamUpdated.connect(self.streamed.append)

    async def connect(self, base_url: str, params: dict[str, Any]) -> None:
        self.connections.save(Connection("lab", base_url), None)
        self.ctl.update_settings(
            self.cid, model_id=RemoteModel("lab", self.model).model_id, params=params
        )
        self.ctl.tool_session.start()
        servers = self.ctl.tool_session.running_servers
        if servers is not None:
            await servers.wait_started(LIMIT_S)

    def path(self) -> list[Any]:
        return self.ctl.store.active_path(self.cid)


@pytest.fixture
def remote_chat(tmp_path: Path, qt_asyncio_loop: Any) -> Iterator[Callable[..., RemoteChat]]:
    made: list[RemoteChat] = []

    def make(model: str = "fake-model", mcp: bool = True) -> RemoteChat:
        made.append(RemoteChat(tmp_path, model, mcp))
        return made[-1]

    yield make
    for chat in made:
        servers = chat.ctl.tool_session.running_servers
        if servers is not None:
            qt_asyncio_loop.run_until_complete(servers.close())
        chat.ctl.shutdown()


def _add(a: int, b: int) -> Reply:
    return Reply("", (Call("fx__add", json.dumps({"a": a, "b": b})),))


def test_a_remote_models_calls_are_asked_remembered_checked_and_answered(
    remote_chat: Callable[..., RemoteChat], qt_asyncio_loop: Any
) -> None:
    server = FakeServer(
        [Reply("Let me add.", _add(2, 3).calls), _add(4, 1), _add(2, 3), Reply("It is 5.")]
    )
    chat = remote_chat()
    ctl, flow, cid = chat.ctl, chat.ctl.tool_flow, chat.cid
    ran: list[ToolCallCard] = []
    flow.callRunning.connect(ran.append)

    async def scenario() -> tuple[ToolCallCard, ToolCallCard]:
        await chat.connect(await server.start(), PARAMS)
        try:
            asked = await _next(qt_asyncio_loop, flow.approvalNeeded, lambda: ctl.send(cid, "2+3?"))
            # "Always for this tool": the next call runs unasked, the repeat of the first is
            # asked about all the same.
            again = await _next(
                qt_asyncio_loop, flow.approvalNeeded, lambda: flow.approve(cid, remember="tool")
            )
            flow.deny(cid)
            await until(lambda: not server.replies and not ctl.is_busy(), LIMIT_S)
        finally:
            await server.stop()
        return asked, again

    asked, again = qt_asyncio_loop.run_until_complete(scenario())
    assert (asked.server, asked.tool, asked.model_name) == ("fx", "add", "fx__add")
    assert asked.arguments == {"a": 2, "b": 3} and not asked.repeated
    assert again.repeated and again.arguments == {"a": 2, "b": 3}
    assert [p.arguments for p in ran] == [{"a": 2, "b": 3}, {"a": 4, "b": 1}]
    roles = [(m.role, m.content) for m in chat.path()]
    assert roles == [
        ("user", "2+3?"),
        ("assistant", "Let me add."),
        ("tool", "5"),
        ("assistant", ""),
        ("tool", "5"),
        ("assistant", ""),
        ("tool", "The person denied this call; it did not run."),
        ("assistant", "It is 5."),
    ]
    first_call = chat.path()[1].tool_calls[0]
    assert first_call["name"] == "fx__add" and first_call["arguments"] == {"a": 2, "b": 3}
    # Every request offers the chat's tools; the history goes back in OpenAI's shape.
    offered = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert {"fx__add", "search_conversations"} <= offered
    history = server.requests[1]["messages"]
    assert history[-2]["tool_calls"][0]["function"] == {
        "name": "fx__add",
        "arguments": json.dumps({"a": 2, "b": 3}),
    }
    assert history[-1] == {
        "role": "tool",
        "content": "5",
        "tool_call_id": first_call["id"],
        "name": "fx__add",
    }
    # While the call streamed, the window was told which tool, and shows it by its own name.
    assert any(p.calling == "fx__add" for p in chat.streamed)
    assert ctl.tools.label(cid, "fx__add") == ToolLabel("fx", "add")


def test_a_remote_call_to_a_tool_the_chat_lacks_is_answered_as_an_error(
    remote_chat: Callable[..., RemoteChat], qt_asyncio_loop: Any
) -> None:
    server = FakeServer([Reply("", (Call("nowhere__x", "{}"),)), Reply("Sorry.")])
    chat = remote_chat(mcp=False)

    async def scenario() -> None:
        await chat.connect(await server.start(), PARAMS)
        try:
            assert chat.ctl.send(chat.cid, "Go")
            await until(lambda: not server.replies and not chat.ctl.is_busy(), LIMIT_S)
        finally:
            await server.stop()

    qt_asyncio_loop.run_until_complete(scenario())
    *_, result, answer = chat.path()
    assert result.status == "error" and "no tool named nowhere__x" in result.content
    assert answer.content == "Sorry."


SEARCH_CALL = '<tool_call>{"name":"search_conversations","arguments":{"query":"Paris"}}</tool_call>'


@pytest.fixture(scope="module")
def branchwise_served(
    tiny_models_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Served, int]]:
    """Branchwise's own server's worker on a tiny model with Qwen2.5's tool template, one of
    whose tokens decodes to a whole call of the built-in search."""
    folder = with_template(
        tiny_models_dir / "llama",
        tmp_path_factory.mktemp("served") / "tools-model",
        QWEN_TOOLS_TEMPLATE,
    )
    token = with_call_token(folder, SEARCH_CALL + "DONE")
    served = start_worker(folder)
    yield served, token
    served.worker.shutdown()


def test_a_chat_on_branchwise_serve_calls_the_built_in_search(
    branchwise_served: tuple[Served, int],
    remote_chat: Callable[..., RemoteChat],
    qt_asyncio_loop: Any,
) -> None:
    served, token = branchwise_served
    chat = remote_chat("tools-model", mcp=False)
    ctl, flow, cid = chat.ctl, chat.ctl.tool_flow, chat.cid
    forced = {**PARAMS, "max_tokens": 1, "logit_bias": {str(token): 100}}

    async def scenario() -> ToolCallCard:
        async with serving(served) as (server, _client):
            await chat.connect(server.url, forced)
            asked = await _next(
                qt_asyncio_loop,
                flow.approvalNeeded,
                lambda: ctl.send(cid, "Where did we talk of Paris?"),
            )
            # The model is forced to call again: the second reply writes plain text instead.
            ctl.update_settings(cid, params={**PARAMS, "max_tokens": 2})
            flow.approve(cid)
            await until(lambda: len(chat.path()) == 4 and not ctl.is_busy(), LIMIT_S)
            return asked

    asked = qt_asyncio_loop.run_until_complete(scenario())
    assert (asked.server, asked.tool) == ("branchwise", "search_conversations")
    assert asked.arguments == {"query": "Paris"}
    _user, call, result, answer = chat.path()
    assert call.tool_calls[0]["name"] == "search_conversations"
    assert "<tool_call>" not in call.content
    assert result.role == "tool" and result.stats["server"] == "branchwise"
    assert answer.parent_id == result.id and answer.status == "complete"
