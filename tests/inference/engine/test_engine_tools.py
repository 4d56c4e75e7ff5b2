"""Tools through the engine: schemas rendered by a tools-capable chat template (Qwen2.5's), a
conversation holding calls and results, the reply read back into calls, and the cache reused
across a tool turn so that continuing after a result computes only what the template adds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inference import Engine, LoadedModel, PromptError, SamplingParams, load_model
from tests.engine_reference import Comparison, check_tokens, reference, template_messages
from tests.tiny_models import (
    EOS_ID,
    FORCED_STOP,
    QWEN_TOOLS_TEMPLATE,
    WEATHER_TOOL,
    with_call_token,
    with_template,
)

TOOLS = [WEATHER_TOOL]
QUESTION = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the weather in Paris?"},
]
# The call as the app stores it (OpenAI's shape: arguments as a JSON string) ...
STORED_CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ],
}
RESULT = {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "Sunny, 21 C"}
# ... and as Qwen's template renders it after the assistant header, which is what the model
# writes when it calls.
CALL_MARKUP = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


@pytest.fixture(scope="module")
def qwen_model(tiny_models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tools") / "llama-qwen"
    return with_template(tiny_models_dir / "llama", folder, QWEN_TOOLS_TEMPLATE)


@pytest.fixture(scope="module")
def loaded(qwen_model: Path) -> LoadedModel:
    return load_model(qwen_model)


def test_tools_are_rendered_and_counted_through_the_template(loaded: LoadedModel) -> None:
    engine = Engine(loaded, 10**8)
    rendered = loaded.tokenizer.apply_chat_template(
        QUESTION, tools=TOOLS, add_generation_prompt=True, tokenize=False
    )
    assert '"name": "get_weather"' in rendered
    with_tools = engine.count_prompt_tokens(QUESTION, tools=TOOLS)
    assert with_tools == len(
        loaded.tokenizer.apply_chat_template(QUESTION, tools=TOOLS, add_generation_prompt=True)
    )
    assert with_tools > engine.count_prompt_tokens(QUESTION) + 50
    result = engine.generate(QUESTION, SamplingParams(max_tokens=3), "c", tools=TOOLS)
    assert result.stats.prompt_tokens == with_tools
    assert result.tool_calls == () and result.content is not None


def test_arguments_as_a_json_string_or_an_object_render_alike(loaded: LoadedModel) -> None:
    engine = Engine(loaded, 10**8)
    as_text = [*QUESTION, STORED_CALL, RESULT]
    as_object = template_messages(as_text)
    expected = loaded.tokenizer.apply_chat_template(
        as_object, tools=TOOLS, add_generation_prompt=True
    )
    assert engine.count_prompt_tokens(as_text, tools=TOOLS) == len(expected)
    assert engine.count_prompt_tokens(as_object, tools=TOOLS) == len(expected)
    params = SamplingParams(max_tokens=4)
    result = engine.generate(as_text, params, "c", tools=TOOLS)
    check_tokens(result.token_ids, reference(loaded, expected, params, 4), Comparison(), "tools")


def test_continuing_after_a_tool_result_computes_only_the_result_turn(
    loaded: LoadedModel,
) -> None:
    engine = Engine(loaded, 10**8, prefill_chunk_tokens=16)
    # The model writes the call and ends its turn: here the call is the reply so far (as if
    # generated) and the end-of-turn token is forced, so the cache holds exactly the tokens a
    # model that called would have left there.
    calling = [*QUESTION, {"role": "assistant", "content": CALL_MARKUP}]
    end_turn = SamplingParams(max_tokens=2, logit_bias={EOS_ID: 1e9})
    called = engine.generate(calling, end_turn, "c", tools=TOOLS, continue_reply=True)
    assert called.token_ids == (EOS_ID,) and called.finish_reason == "stop"
    rendered = loaded.tokenizer.apply_chat_template(
        calling, tools=TOOLS, continue_final_message=True
    )
    before = [*rendered, EOS_ID]

    params = SamplingParams(max_tokens=4)
    follow = [*QUESTION, STORED_CALL, RESULT]
    result = engine.generate(follow, params, "c", tools=TOOLS)
    ids = loaded.tokenizer.apply_chat_template(
        template_messages(follow), tools=TOOLS, add_generation_prompt=True
    )
    # The template re-renders the stored call exactly as the model wrote it ...
    assert ids[: len(before)] == before
    # ... so only what it adds after the model's end of turn is computed: the newline, the
    # result's user turn and the next assistant header.
    added = loaded.tokenizer.decode(ids[len(before) :])
    assert added == (
        "\n<|im_start|>user\n<tool_response>\nSunny, 21 C\n</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert result.stats.cached_tokens == len(before)
    assert result.stats.prefill_tokens == len(ids) - len(before)
    check_tokens(result.token_ids, reference(loaded, ids, params, 4), Comparison(), "after")


def test_a_call_in_the_reply_comes_back_as_a_tool_call(qwen_model: Path, tmp_path: Path) -> None:
    folder = with_template(qwen_model, tmp_path / "forced", QWEN_TOOLS_TEMPLATE)
    token = with_call_token(folder)
    engine = Engine(load_model(folder), 10**8)
    forced = SamplingParams(max_tokens=3, logit_bias={token: 100.0}, stop=[FORCED_STOP])
    result = engine.generate(QUESTION, forced, "c", tools=TOOLS)
    assert result.finish_reason == "tool_calls"
    assert len(result.tool_calls) == 1
    call = result.tool_calls[0]
    assert call["name"] == "get_weather" and call["arguments"] == {"city": "Paris"}
    assert call["id"]
    assert result.content == ""
    assert "<tool_call>" in result.text  # the raw reply keeps the markup the model wrote
    # Without tools offered, the same reply is plain text.
    plain = engine.generate(QUESTION, forced, "d")
    assert plain.tool_calls == () and plain.content is None and plain.finish_reason == "stop"


def test_tools_for_a_template_that_takes_none_are_refused(llama_path: Path) -> None:
    engine = Engine(load_model(llama_path), 10**8)
    with pytest.raises(PromptError, match="takes no tools"):
        engine.generate(QUESTION, SamplingParams(max_tokens=2), "c", tools=TOOLS)
    with pytest.raises(PromptError, match="takes no tools"):
        engine.count_prompt_tokens(QUESTION, tools=TOOLS)
    # No tools (or an empty list) is simply a chat.
    assert engine.generate(QUESTION, SamplingParams(max_tokens=2), "c", tools=[]).text is not None


def _call(**function: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "x", "type": "function", "function": function}],
    }


@pytest.mark.parametrize(
    ("messages", "tools", "says"),
    [
        ([*QUESTION, _call(name="get_weather", arguments="{not json")], TOOLS, "not JSON"),
        ([*QUESTION, _call(name="get_weather", arguments="[1, 2]")], TOOLS, "not a JSON object"),
        ([*QUESTION, _call(arguments="{}")], TOOLS, "no function name"),
        ([*QUESTION, {"role": "assistant", "tool_calls": "get_weather"}], TOOLS, "not a list"),
        (
            [*QUESTION, {"role": "user", "content": "hi", "tool_calls": STORED_CALL["tool_calls"]}],
            TOOLS,
            "only replies make them",
        ),
        ([*QUESTION, {"role": "tool", "tool_call_id": "x"}], TOOLS, "no text content"),
        ([*QUESTION, {"role": "tool", "content": "ok", "tool_call_id": 7}], TOOLS, "not text"),
        (QUESTION, {"type": "function"}, "Tools must be a list"),
        (QUESTION, [{"type": "function", "function": {"description": "x"}}], "Tool 1"),
        (QUESTION, [{"type": "retrieval", "function": {"name": "x"}}], "Tool 1"),
        (QUESTION, [{"type": "function", "function": {"name": "x", "bad": {1, 2}}}], "not JSON"),
    ],
)
def test_malformed_tool_messages_and_schemas_are_refused(
    loaded: LoadedModel, messages: list, tools: Any, says: str
) -> None:
    engine = Engine(loaded, 10**8)
    with pytest.raises(PromptError, match=says):
        engine.generate(messages, SamplingParams(max_tokens=2), "c", tools=tools)
    # The engine stays usable after the refusal.
    assert engine.generate(QUESTION, SamplingParams(max_tokens=2), "c", tools=TOOLS).token_ids
