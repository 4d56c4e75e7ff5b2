"""The local OpenAI-compatible server, driven by the official `openai` client on the tiny llama:
what another tool sees (models, streamed and whole replies, usage with the engine's cached
tokens, stop strings, typed errors) and what keeps the person safe (key, Host, CORS, binds)."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import openai
import pytest
from PySide6.QtCore import Qt

from app.generation.worker import GenerationRequest
from app.generation.worker_events import GenerationFinished, TokensReady
from app.server.config import ServerConfig, ServerConfigError
from app.server.openai_schema import parse_chat
from app.store.conversations import Store
from tests.server_harness import Generated, Served, serving, start_worker
from tests.tiny_models import NO_EOS
from tests.tiny_vision import png_bytes

MODEL = "llama"
HELLO = [{"role": "user", "content": "Tell me a story about a cat."}]
# Bounds every scenario: nothing may hang the run.
SCENARIO_S = 60
# A closed stream is noticed by the server and reaches the engine well within this.
STOPS_WITHIN_S = 2.0


@pytest.fixture(scope="module")
def served(llama_path: Path) -> Iterator[Served]:
    served = start_worker(llama_path)
    yield served
    served.worker.shutdown()


def run(coro: object) -> object:
    return asyncio.run(asyncio.wait_for(coro, SCENARIO_S))  # type: ignore[arg-type]


def test_lists_the_loaded_model_and_answers_health(served: Served) -> None:
    async def scenario() -> None:
        async with serving(served) as (server, client):
            models = await client.models.list()
            assert [m.id for m in models.data] == [MODEL]
            health = server.url.removesuffix("/v1") + "/health"
            async with aiohttp.ClientSession() as http, http.get(health) as response:
                assert response.status == 200
                assert await response.json() == {"status": "ok"}

    run(scenario())


def test_streams_a_reply_with_usage_matching_the_whole_reply(served: Served) -> None:
    async def scenario() -> None:
        async with serving(served) as (_server, client):
            whole = await client.chat.completions.create(
                model=MODEL,
                messages=HELLO,
                max_completion_tokens=12,
                temperature=0,
                extra_body={"logit_bias": NO_EOS},
            )
            stream = await client.chat.completions.create(
                model=MODEL,
                messages=HELLO,
                max_tokens=12,
                temperature=0,
                stream=True,
                stream_options={"include_usage": True},
                extra_body={"logit_bias": NO_EOS},
            )
            chunks = [chunk async for chunk in stream]
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert whole.choices[0].message.content == text != ""
        assert whole.choices[0].finish_reason == "length"
        assert whole.usage.completion_tokens == 12
        assert chunks[0].choices[0].delta.role == "assistant"
        assert [c.choices[0].finish_reason for c in chunks[:-1]][-1] == "length"
        last = chunks[-1]
        assert last.choices == []
        assert last.usage.completion_tokens == 12
        assert last.usage.prompt_tokens == whole.usage.prompt_tokens
        assert all(c.usage is None for c in chunks[:-1])

    run(scenario())


def test_a_repeat_and_a_sibling_branch_report_the_cached_prefix(served: Served) -> None:
    history = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Explain recursion to a child, please."},
    ]

    async def scenario() -> None:
        async with serving(served) as (_server, client):
            ask = client.chat.completions.create
            first = await ask(model=MODEL, messages=history, max_tokens=6, temperature=0)
            # Regenerate: the same path again, sampled differently.
            regenerated = await ask(
                model=MODEL, messages=history, max_tokens=6, temperature=1.0, seed=7
            )
            # A sibling branch: the same system prompt, an edited question.
            edited = [history[0], {"role": "user", "content": "Explain recursion to an adult."}]
            sibling = await ask(model=MODEL, messages=edited, max_tokens=6, temperature=0)
            reply = first.choices[0].message.content
            follow_up = [
                *history,
                {"role": "assistant", "content": reply},
                {"role": "user", "content": "And once more?"},
            ]
            follow = await ask(model=MODEL, messages=follow_up, max_tokens=6, temperature=0)
        prompt = first.usage.prompt_tokens
        assert regenerated.usage.prompt_tokens_details.cached_tokens == prompt - 1
        shared = sibling.usage.prompt_tokens_details.cached_tokens
        assert 0 < shared < sibling.usage.prompt_tokens
        assert follow.usage.prompt_tokens_details.cached_tokens >= prompt

    run(scenario())


def test_stop_strings_cut_the_reply(served: Served) -> None:
    async def scenario() -> tuple[str, str, object]:
        async with serving(served) as (_server, client):
            params = {
                "model": MODEL,
                "messages": HELLO,
                "max_tokens": 40,
                "temperature": 0,
                "extra_body": {"logit_bias": NO_EOS},
            }
            free = await client.chat.completions.create(**params)
            text = free.choices[0].message.content
            stop = text[len(text) // 2 :][:2]
            cut = await client.chat.completions.create(**params, stop=[stop])
            return text, stop, cut

    text, stop, cut = run(scenario())
    assert cut.choices[0].finish_reason == "stop"
    assert cut.choices[0].message.content == text[: text.index(stop)]


def test_a_completion_takes_a_prompt_of_token_ids(served: Served) -> None:
    async def scenario() -> None:
        async with serving(served) as (_server, client):
            ids = [40, 41, 42, 43]
            reply = await client.completions.create(
                model=MODEL,
                prompt=ids,
                max_tokens=5,
                temperature=0,
                extra_body={"logit_bias": NO_EOS},
            )
            assert reply.usage.prompt_tokens == len(ids)
            assert reply.usage.completion_tokens == 5
            assert reply.choices[0].finish_reason == "length"
            with pytest.raises(openai.BadRequestError) as too_big:
                await client.completions.create(model=MODEL, prompt=[10**6], max_tokens=2)
            assert "vocabulary" in too_big.value.body["message"]
            stream = await client.completions.create(
                model=MODEL,
                prompt="The quick brown fox",
                max_tokens=4,
                temperature=0,
                stream=True,
                extra_body={"logit_bias": NO_EOS},
            )
            chunks = [chunk async for chunk in stream]
            assert chunks[-1].choices[0].finish_reason == "length"
            assert "".join(c.choices[0].text for c in chunks) != ""

    run(scenario())


def test_an_image_for_a_text_only_model_is_a_400_naming_it(served: Served) -> None:
    picture = png_bytes(40, 30, 1)
    url = "data:image/png;base64," + base64.b64encode(picture).decode()

    async def scenario() -> None:
        async with serving(served) as (_server, client):
            with pytest.raises(openai.BadRequestError) as refused:
                await client.chat.completions.create(
                    model=MODEL,
                    max_tokens=2,
                    messages=[
                        {
                            "role": "user",
                            "content": [
                                {"type": "text", "text": "What is this?"},
                                {"type": "image_url", "image_url": {"url": url}},
                            ],
                        }
                    ],
                )
            assert refused.value.body["message"] == (
                f"{MODEL} cannot see images: it is a text-only model."
            )

    run(scenario())


def test_errors_are_typed_json_bodies(served: Served) -> None:
    async def scenario() -> None:
        async with serving(served) as (server, client):
            with pytest.raises(openai.BadRequestError) as many:
                await client.chat.completions.create(model=MODEL, messages=HELLO, n=2)
            assert many.value.body["param"] == "n"
            assert many.value.body["type"] == "invalid_request_error"
            with pytest.raises(openai.BadRequestError) as penalty:
                await client.chat.completions.create(
                    model=MODEL, messages=HELLO, frequency_penalty=0.5
                )
            assert penalty.value.body["param"] == "frequency_penalty"
            with pytest.raises(openai.BadRequestError) as sampling:
                await client.chat.completions.create(
                    model=MODEL, messages=HELLO, temperature=-1, stream=True
                )
            assert "temperature" in sampling.value.body["message"]
            with pytest.raises(openai.NotFoundError) as unknown:
                await client.chat.completions.create(model="gpt-4o", messages=HELLO)
            assert unknown.value.body["code"] == "model_not_found"
            assert set(unknown.value.response.json()["error"]) == {
                "message",
                "type",
                "param",
                "code",
            }
            async with aiohttp.ClientSession() as http:
                chat = f"{server.url}/chat/completions"
                async with http.post(chat, data=b"{not json") as response:
                    assert response.status == 400
                    assert (await response.json())["error"]["code"] == "invalid_json"
                async with http.get(f"{server.url}/nowhere") as response:
                    assert response.status == 404
                    assert (await response.json())["error"]["type"] == "not_found_error"

    loads: list[str] = []
    served.worker.loadStarted.connect(loads.append, Qt.ConnectionType.DirectConnection)
    try:
        run(scenario())
    finally:
        served.worker.loadStarted.disconnect(loads.append)
    assert loads == [], "a request's model field must never load anything"


def test_a_wrong_key_gets_401(served: Served) -> None:
    async def scenario() -> None:
        config = ServerConfig(port=0, api_key="right key")
        async with serving(served, config) as (server, client):
            assert [m.id for m in (await client.models.list()).data] == [MODEL]
            wrong = openai.AsyncOpenAI(base_url=server.url, api_key="wrong", max_retries=0)
            with pytest.raises(openai.AuthenticationError) as refused:
                await wrong.chat.completions.create(model=MODEL, messages=HELLO)
            await wrong.close()
            assert refused.value.body["code"] == "invalid_api_key"

    run(scenario())


def test_other_hosts_and_unlisted_origins_are_refused(served: Served) -> None:
    listed, other = "http://localhost:3000", "http://evil.example"

    async def scenario() -> None:
        config = ServerConfig(port=0, cors_origins=(listed,))
        async with serving(served, config) as (server, _client), aiohttp.ClientSession() as http:
            models = f"{server.url}/models"
            async with http.get(models, headers={"Host": f"evil.example:{server.port}"}) as r:
                assert r.status == 403
                assert (await r.json())["error"]["code"] == "host_not_allowed"
            async with http.get(models, headers={"Host": f"localhost:{server.port}"}) as r:
                assert r.status == 200
            preflight = {
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            }
            chat = f"{server.url}/chat/completions"
            async with http.options(chat, headers={"Origin": listed, **preflight}) as r:
                assert r.status == 204
                assert r.headers["Access-Control-Allow-Origin"] == listed
                assert "POST" in r.headers["Access-Control-Allow-Methods"]
                assert "authorization" in r.headers["Access-Control-Allow-Headers"]
            async with http.options(chat, headers={"Origin": other, **preflight}) as r:
                assert r.status == 403
                assert "Access-Control-Allow-Origin" not in r.headers
            async with http.get(models, headers={"Origin": listed}) as r:
                assert r.headers["Access-Control-Allow-Origin"] == listed
            async with http.get(models, headers={"Origin": other}) as r:
                assert "Access-Control-Allow-Origin" not in r.headers

    run(scenario())


def test_binding_beyond_loopback_needs_a_key(served: Served) -> None:
    with pytest.raises(ServerConfigError, match="API key"):
        ServerConfig(host="0.0.0.0").check()
    with pytest.raises(ServerConfigError, match="API key"):
        ServerConfig(host="192.168.1.20").check()
    ServerConfig(host="0.0.0.0", api_key="k").check()
    ServerConfig(host="::1").check()


def test_a_client_closing_its_stream_stops_the_generation(served: Served) -> None:
    async def scenario() -> list[Generated]:
        async with serving(served) as (_server, client):
            stream = await client.chat.completions.create(
                model=MODEL,
                messages=HELLO,
                max_tokens=4000,
                temperature=0,
                stream=True,
                extra_body={"logit_bias": NO_EOS},
            )
            seen = 0
            async for _chunk in stream:
                seen += 1
                if seen == 3:
                    break
            logged = len(served.engine.log)
            await stream.close()
            deadline = time.monotonic() + STOPS_WITHIN_S
            while len(served.engine.log) == logged and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            # Read before the server stops (stopping would cancel it anyway).
            return served.engine.log[logged:]

    ended = run(scenario())
    assert len(ended) == 1, "the generation must end soon after the client goes away"
    assert ended[0].finish_reason == "cancelled"
    assert ended[0].generated_tokens < 4000
    assert ended[0].tokens_after_cancel <= 1


def test_a_full_queue_answers_503_without_retry(served: Served) -> None:
    async def scenario() -> None:
        async with serving(served, max_pending=1) as (_server, client):
            long = await client.chat.completions.create(
                model=MODEL,
                messages=HELLO,
                max_tokens=4000,
                temperature=0,
                stream=True,
                extra_body={"logit_bias": NO_EOS},
            )
            await anext(aiter(long))
            with pytest.raises(openai.InternalServerError) as busy:
                await client.chat.completions.create(model=MODEL, messages=HELLO, max_tokens=2)
            assert busy.value.status_code == 503
            assert busy.value.response.headers["x-should-retry"] == "false"
            assert busy.value.body["code"] == "server_busy"
            await long.close()

    run(scenario())


def test_window_and_server_requests_never_cross_tokens(served: Served) -> None:
    """A window reply runs on the same worker while a client streams: each gets its own text."""
    window_texts: list[str] = []
    window_final: list[str] = []
    worker = served.worker

    rid = 0

    def on_tokens(tokens: TokensReady) -> None:
        if tokens.request_id == rid:
            window_texts.append(tokens.text)

    def on_finished(finished: GenerationFinished) -> None:
        if finished.request_id == rid:
            window_final.append(finished.text)

    async def scenario() -> tuple[str, str]:
        nonlocal rid
        async with serving(served) as (_server, client):
            rid = worker.next_request_id()
            direct = Qt.ConnectionType.DirectConnection
            worker.tokensReady.connect(on_tokens, direct)
            worker.generationFinished.connect(on_finished, direct)
            window = [{"role": "user", "content": "Write a haiku about the sea."}]
            params = {"max_tokens": 30, "temperature": 0.0, "logit_bias": NO_EOS}
            stream = await client.chat.completions.create(
                model=MODEL,
                messages=HELLO,
                max_tokens=30,
                temperature=0,
                stream=True,
                extra_body={"logit_bias": NO_EOS},
            )
            worker.submit(GenerationRequest(rid, window, params))
            streamed = "".join(
                [c.choices[0].delta.content or "" async for c in stream if c.choices]
            )
            alone = await client.chat.completions.create(
                model=MODEL,
                messages=HELLO,
                max_tokens=30,
                temperature=0,
                extra_body={"logit_bias": NO_EOS},
            )
            deadline = time.monotonic() + 10
            while not window_final and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            return streamed, alone.choices[0].message.content

    try:
        streamed, alone = run(scenario())
    finally:
        worker.tokensReady.disconnect(on_tokens)
        worker.generationFinished.disconnect(on_finished)
    assert streamed == alone
    assert window_final and "".join(window_texts) == window_final[0]


def test_a_request_may_name_a_preset_and_its_own_fields_win(served: Served, tmp_path: Path) -> None:
    store = Store.open(tmp_path / "chats.sqlite3")
    short = {"temperature": 0.0, "max_tokens": 3, "seed": 1}
    store.create_preset("Short", {"system_prompt": "Be brief.", "params": short})

    async def scenario() -> None:
        async with serving(served, presets=store.preset_named) as (_server, client):
            bias = {"logit_bias": NO_EOS}
            named = await client.chat.completions.create(
                model=MODEL, messages=HELLO, extra_body={"preset": "short", **bias}
            )
            assert named.usage is not None and named.usage.completion_tokens == 3
            own = await client.chat.completions.create(
                model=MODEL, messages=HELLO, max_tokens=2, extra_body={"preset": "Short", **bias}
            )
            assert own.usage is not None and own.usage.completion_tokens == 2
            plain = await client.chat.completions.create(
                model=MODEL, messages=HELLO, max_tokens=3, temperature=0.0, extra_body=bias
            )
            assert plain.usage is not None  # the preset's system prompt was read as well
            assert named.usage.prompt_tokens > plain.usage.prompt_tokens
            with pytest.raises(openai.NotFoundError, match="no preset named 'Long'"):
                await client.chat.completions.create(
                    model=MODEL, messages=HELLO, extra_body={"preset": "Long"}
                )

    try:
        run(scenario())
        # A request's own system message wins over the preset's.
        own_system = [{"role": "system", "content": "Be long."}, *HELLO]
        parsed = parse_chat(
            {"model": MODEL, "messages": own_system, "preset": "Short"}, 9, store.preset_named
        )
        assert parsed.messages == own_system and parsed.params["max_tokens"] == 3
    finally:
        store.close()
