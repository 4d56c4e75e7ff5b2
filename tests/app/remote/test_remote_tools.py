"""Tools on a remote model: the request's tools and its tool-call history go to the server, and
the calls it streams back (`delta.tool_calls`) come back as the reply's tool calls. The server is
Branchwise's own (a real OpenAI-compatible server) on a tiny model with Qwen2.5's template, one
of whose tokens decodes to a whole call, behind a proxy that records what was sent."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from app.generation.worker import GenerationRequest
from app.generation.worker_events import GenerationFinished
from app.remote.backend import RemoteBackend
from app.remote.connections import Connection, Connections, FileKeys, RemoteModel
from app.remote.streamed_calls import StreamedCalls
from tests.remote_servers import RecordingProxy, play, until
from tests.server_harness import Served, serving, start_worker
from tests.tiny_models import (
    FORCED_CALL,
    QWEN_TOOLS_TEMPLATE,
    WEATHER_TOOL,
    with_call_token,
    with_template,
)

MODEL = "tools-model"
HISTORY = [
    {"role": "user", "content": "What is the weather in Paris?"},
    # As the app may hold it: the arguments as an object.
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21 C"},
    {"role": "user", "content": "And in Rome?"},
]


@pytest.fixture(scope="module")
def served(tiny_models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    folder = with_template(
        tiny_models_dir / "llama", tmp_path_factory.mktemp("remote") / MODEL, QWEN_TOOLS_TEMPLATE
    )
    token = with_call_token(folder, FORCED_CALL)
    served = start_worker(folder)
    yield served, token
    served.worker.shutdown()


def test_tools_and_calls_travel_to_the_server_and_back(
    served: tuple[Served, int], tmp_path: Path, qt_asyncio_loop: Any
) -> None:
    server_side, token = served
    connections = Connections(tmp_path, keys=FileKeys(tmp_path / "keys.json"))
    backend = RemoteBackend(connections)
    finished: list[GenerationFinished] = []
    backend.generationFinished.connect(finished.append)
    streamed: list[str] = []
    backend.tokensReady.connect(lambda p: streamed.append(p.text))

    async def scenario() -> None:
        async with serving(server_side) as (server, _client):
            proxy = RecordingProxy(server.url)
            connections.save(Connection("lab", await proxy.start()), None)
            params = {
                "temperature": 0.0,
                "top_p": 1.0,
                "max_tokens": 1,
                "logit_bias": {str(token): 100},
            }
            backend.submit(
                GenerationRequest(
                    1,
                    HISTORY,
                    params,
                    model_id=RemoteModel("lab", MODEL).model_id,
                    tools=[WEATHER_TOOL],
                )
            )
            await until(lambda: bool(finished))
            await proxy.stop()
            (sent,) = [r for r in proxy.requests if "messages" in r]
            assert sent["tools"] == [WEATHER_TOOL]
            call = sent["messages"][1]["tool_calls"][0]
            assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
            assert sent["messages"][2]["tool_call_id"] == "call_1"

    play(qt_asyncio_loop, scenario())
    (payload,) = finished
    (call,) = payload.tool_calls
    assert call["name"] == "get_weather" and call["arguments"] == {"city": "Paris"}
    assert call["id"]
    assert "<tool_call>" not in payload.text + "".join(streamed)


def _piece(
    index: int, call_id: str | None = None, name: str | None = None, arguments: str | None = None
) -> SimpleNamespace:
    return SimpleNamespace(
        index=index, id=call_id, function=SimpleNamespace(name=name, arguments=arguments)
    )


def test_calls_streamed_in_pieces_are_put_together_in_order() -> None:
    calls = StreamedCalls()
    calls.add([_piece(0, "a", "get_weather", '{"ci')])
    calls.add([_piece(1, "b", "get_time", "")])
    calls.add([_piece(0, arguments='ty": "Oslo"}'), _piece(1, arguments="{}")])
    calls.add([_piece(2, "c", "broken", '{"city": ')])
    made, unreadable = calls.whole()
    assert made == (
        {"id": "a", "name": "get_weather", "arguments": {"city": "Oslo"}},
        {"id": "b", "name": "get_time", "arguments": {}},
    )
    # A call whose arguments never became a JSON object is kept as text, not dropped.
    assert "broken" in unreadable and '{"city": ' in unreadable
