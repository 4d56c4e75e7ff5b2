"""Tool calling on the local server, driven by the official `openai` client: a tiny model with
Qwen2.5's template (one of its tokens made to decode to a whole call, so a logit bias forces the
model to call), tools and tool results in the history, calls coming back whole and streamed,
`tool_choice`, and a 400 for a model whose template takes no tools."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from app.server.openai_tools import ContentStream
from inference import load_model
from tests.engine_reference import template_messages
from tests.server_harness import Served, serving, start_worker
from tests.tiny_models import (
    FORCED_STOP,
    QWEN_TOOLS_TEMPLATE,
    WEATHER_TOOL,
    with_call_token,
    with_template,
)

MODEL = "tools-model"
SCENARIO_S = 60
TOOLS = [WEATHER_TOOL]
QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]
HISTORY = [
    *QUESTION,
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21 C"},
]


@pytest.fixture(scope="module")
def model_folder(tiny_models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = with_template(
        tiny_models_dir / "llama", tmp_path_factory.mktemp("served") / MODEL, QWEN_TOOLS_TEMPLATE
    )
    with_call_token(folder)
    return folder


@pytest.fixture(scope="module")
def served(model_folder: Path) -> Iterator[Served]:
    served = start_worker(model_folder)
    yield served
    served.worker.shutdown()


@pytest.fixture(scope="module")
def forced(model_folder: Path) -> dict:
    """The request's sampling settings that make the model write the call, then a stop string."""
    token = json.loads((model_folder / "tokenizer.json").read_text())["model"]["vocab"]
    call_id = next(i for text, i in token.items() if text.endswith(FORCED_STOP))
    return {
        "max_completion_tokens": 3,
        "temperature": 0,
        "stop": [FORCED_STOP],
        "extra_body": {"logit_bias": {str(call_id): 100}},
    }


def run(coro: object) -> object:
    return asyncio.run(asyncio.wait_for(coro, SCENARIO_S))  # type: ignore[arg-type]


def prompt_tokens(folder: Path, messages: list[dict], tools: list | None) -> int:
    tokenizer = load_model(folder).tokenizer
    return len(
        tokenizer.apply_chat_template(
            template_messages(messages), tools=tools, add_generation_prompt=True
        )
    )


def test_tools_and_a_tool_result_in_the_history_are_rendered_and_answered(
    served: Served, model_folder: Path
) -> None:
    async def scenario() -> None:
        async with serving(served) as (_server, client):
            reply = await client.chat.completions.create(
                model=MODEL,
                messages=HISTORY,
                tools=TOOLS,
                max_completion_tokens=4,
                temperature=0,
            )
            assert reply.usage.prompt_tokens == prompt_tokens(model_folder, HISTORY, TOOLS)
            assert reply.choices[0].finish_reason in ("stop", "length")
            # tool_choice "none": the model sees no tools, though the history holds a call.
            plain = await client.chat.completions.create(
                model=MODEL,
                messages=HISTORY,
                tools=TOOLS,
                tool_choice="none",
                max_completion_tokens=2,
                temperature=0,
            )
            assert plain.usage.prompt_tokens == prompt_tokens(model_folder, HISTORY, None)

    run(scenario())


def test_a_call_comes_back_as_tool_calls_whole(served: Served, forced: dict) -> None:
    async def scenario() -> None:
        async with serving(served) as (_server, client):
            reply = await client.chat.completions.create(
                model=MODEL,
                messages=QUESTION,
                tools=TOOLS,
                **forced,
            )
            choice = reply.choices[0]
            assert choice.finish_reason == "tool_calls"
            assert choice.message.content is None
            (call,) = choice.message.tool_calls
            assert call.id and call.type == "function"
            assert call.function.name == "get_weather"
            assert json.loads(call.function.arguments) == {"city": "Paris"}
            # Without tools, the same reply is text: nothing is read into calls.
            text = await client.chat.completions.create(
                model=MODEL,
                messages=QUESTION,
                **forced,
            )
            assert text.choices[0].message.tool_calls is None
            assert "<tool_call>" in text.choices[0].message.content

    run(scenario())


def test_a_streamed_call_comes_as_delta_tool_calls_without_markup(
    served: Served, forced: dict
) -> None:
    async def scenario() -> None:
        async with serving(served) as (_server, client):
            stream = await client.chat.completions.create(
                model=MODEL,
                messages=QUESTION,
                tools=TOOLS,
                stream=True,
                **forced,
            )
            content, calls, reasons = "", [], []
            async for chunk in stream:
                for choice in chunk.choices:
                    content += choice.delta.content or ""
                    calls += choice.delta.tool_calls or []
                    reasons.append(choice.finish_reason)
            assert "<tool_call" not in content and content == ""
            assert reasons[-1] == "tool_calls"
            (call,) = calls
            assert call.index == 0 and call.id and call.function.name == "get_weather"
            assert json.loads(call.function.arguments) == {"city": "Paris"}

    run(scenario())


def test_a_named_tool_choice_must_name_an_offered_tool(served: Served) -> None:
    async def scenario() -> None:
        async with serving(served) as (_server, client):
            with pytest.raises(openai.BadRequestError) as unknown:
                await client.chat.completions.create(
                    model=MODEL,
                    messages=QUESTION,
                    tools=TOOLS,
                    max_completion_tokens=2,
                    tool_choice={"type": "function", "function": {"name": "send_email"}},
                )
            assert "send_email" in unknown.value.message
            named = await client.chat.completions.create(
                model=MODEL,
                messages=QUESTION,
                tools=TOOLS,
                max_completion_tokens=2,
                tool_choice={"type": "function", "function": {"name": "get_weather"}},
            )
            assert named.choices[0].finish_reason in ("stop", "length")

    run(scenario())


def test_tools_for_a_model_whose_template_takes_none_get_a_400(llama_path: Path) -> None:
    served = start_worker(llama_path)
    try:

        async def scenario() -> None:
            async with serving(served) as (_server, client):
                for stream in (False, True):
                    with pytest.raises(openai.BadRequestError) as refused:
                        await client.chat.completions.create(
                            model="llama",
                            messages=QUESTION,
                            tools=TOOLS,
                            max_completion_tokens=2,
                            stream=stream,
                        )
                    assert "takes no tools" in refused.value.message

        run(scenario())
    finally:
        served.worker.shutdown()


def test_the_stream_holds_back_what_may_be_a_call_starting() -> None:
    stream = ContentStream("hermes")
    assert stream.feed("Let me check. <tool") == "Let me check. "
    assert stream.feed('_call>\n{"name": "get_weather"') == ""
    assert stream.feed("}</tool_call>") == ""
    assert stream.finish("Let me check.") == ""
    # Text that only looked like a marker's start goes out once it is clearly not one.
    other = ContentStream("hermes")
    assert other.feed("a <tool") == "a "
    assert other.feed("box> b") == "<toolbox> b"
    assert other.feed(" <") == " "
    assert other.finish("a <toolbox> b <") == "<"
    # A model writing bare JSON calls (Llama 3.x) may open its reply with one.
    llama = ContentStream("llama3_json")
    assert llama.feed("  ") == ""
    assert llama.feed('{"name"') == ""
    assert ContentStream(None).feed("<tool_call>") == "<tool_call>"
