"""Tool calls streamed the ways real servers stream them (`tests.fake_openai`: vLLM's and
llama.cpp's fragments, whole calls) come out of the remote backend as a local reply's do: the
reply's text, its calls whole, and "calling" told while they stream. A call whose arguments are
not JSON stays visible as text and is no call."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from app.generation.worker import GenerationRequest
from app.generation.worker_errors import WorkerFailure
from app.generation.worker_events import GenerationFinished, TokensReady
from app.remote.backend import RemoteBackend
from app.remote.connections import Connection, Connections, FileKeys, RemoteModel
from app.remote.streamed_calls import StreamedCalls
from tests.fake_openai import STYLES, Call, FakeServer, Reply
from tests.remote_servers import play, until
from tests.tiny_models import WEATHER_TOOL

PARAMS = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 64}
ASKED = [{"role": "user", "content": "Weather in Oslo, and the time?"}]


def _run(
    tmp_path: Path, loop: Any, server: FakeServer
) -> tuple[GenerationFinished | WorkerFailure, list[TokensReady]]:
    """One request through the backend to `server`: its finished payload and its updates."""
    connections = Connections(tmp_path, keys=FileKeys(tmp_path / "keys.json"))
    backend = RemoteBackend(connections)
    finished: list[GenerationFinished | WorkerFailure] = []
    updates: list[TokensReady] = []
    backend.generationFinished.connect(finished.append)
    backend.generationFailed.connect(finished.append)
    backend.tokensReady.connect(updates.append)

    async def scenario() -> None:
        connections.save(Connection("lab", await server.start()), None)
        try:
            backend.submit(
                GenerationRequest(
                    1,
                    ASKED,
                    PARAMS,
                    model_id=RemoteModel("lab", server.model).model_id,
                    tools=[WEATHER_TOOL],
                )
            )
            await until(lambda: bool(finished), 30)
        finally:
            await server.stop()

    play(loop, scenario(), 60)
    return finished[0], updates


@pytest.mark.parametrize("style", STYLES)
def test_streamed_calls_come_whole_whatever_the_server(
    style: str, tmp_path: Path, qt_asyncio_loop: Any
) -> None:
    server = FakeServer(
        [
            Reply(
                "Let me check.",
                (
                    Call("get_weather", '{"city": "Oslo", "units": "metric"}'),
                    Call("get_time", "{}"),
                ),
            )
        ],
        style,
    )
    payload, updates = _run(tmp_path, qt_asyncio_loop, server)
    (sent,) = server.requests
    assert sent["tools"] == [WEATHER_TOOL] and sent["stream"] is True
    assert isinstance(payload, GenerationFinished)
    assert payload.finish_reason == "tool_calls" and payload.text == "Let me check."
    assert [(c["name"], c["arguments"]) for c in payload.tool_calls] == [
        ("get_weather", {"city": "Oslo", "units": "metric"}),
        ("get_time", {}),
    ]
    assert [c["id"] for c in payload.tool_calls] == ["call-1", "call-2"]
    # The text streams as text; from the first piece of a call on, the tool being called.
    calling = [u.calling for u in updates if u.calling is not None]
    assert calling[0] == "get_weather" and calling[-1] == "get_time"
    assert "".join(u.text for u in updates) == "Let me check."
    assert all(u.text == "" for u in updates if u.calling is not None)


@pytest.mark.parametrize("style", ["vllm", "whole"])
def test_arguments_that_are_not_json_stay_text_and_call_nothing(
    style: str, tmp_path: Path, qt_asyncio_loop: Any
) -> None:
    server = FakeServer([Reply("Checking.", (Call("get_weather", '{"city": Oslo}'),))], style)
    payload, _updates = _run(tmp_path, qt_asyncio_loop, server)
    assert isinstance(payload, GenerationFinished) and payload.tool_calls == ()
    assert payload.text == 'Checking.\nget_weather({"city": Oslo})'


def _piece(
    index: int | None,
    call_id: str | None = None,
    name: str | None = None,
    arguments: str | None = None,
) -> SimpleNamespace:
    return SimpleNamespace(
        index=index, id=call_id, function=SimpleNamespace(name=name, arguments=arguments)
    )


def test_a_new_id_at_the_same_index_is_a_new_call() -> None:
    calls = StreamedCalls()  # a server that numbers every call 0
    calls.add([_piece(0, "a", "get_time", "{}")])
    calls.add([_piece(0, "b", "get_weather", '{"city": "Rome"}')])
    made, unreadable = calls.whole()
    assert [c["name"] for c in made] == ["get_time", "get_weather"] and unreadable == ""
    assert calls.calling == "get_weather"


def test_calls_without_ids_or_with_the_same_id_get_their_own() -> None:
    calls = StreamedCalls()
    calls.add([_piece(0, None, "get_time", "{}"), _piece(1, None, "get_time", "{}")])
    calls.add([_piece(2, "x", "f", "{}"), _piece(3, "x", "g", "{}")])
    made, _ = calls.whole()
    ids = [c["id"] for c in made]
    assert len(set(ids)) == 4 and ids[2] == "x"  # a result finds its call by id


def test_a_call_without_a_name_is_kept_as_text() -> None:
    calls = StreamedCalls()
    assert calls.calling is None
    calls.add([_piece(0, "a", None, '{"q": 1}')])
    assert calls.calling == ""
    made, unreadable = calls.whole()
    assert made == () and '{"q": 1}' in unreadable
