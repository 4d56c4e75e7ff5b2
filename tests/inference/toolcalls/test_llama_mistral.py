"""Llama 3.x/4 and Mistral calls, which mlx-lm does not read (Llama) or misreads (Mistral's
`[CALL_ID]`), written as Meta's and Mistral's templates and prompt-format pages show them."""

from __future__ import annotations

from inference import parse_reply


def calls(text: str, fmt: str) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_reply(text, fmt).tool_calls]


# --- Llama ------------------------------------------------------------------------------------


def test_llama31_bare_json_call() -> None:
    # Meta's Llama 3.1 page: the reply is the JSON object, then <|eot_id|>.
    text = (
        '{"name": "get_current_conditions", "parameters": {"location": "San Francisco, CA", '
        '"unit": "Fahrenheit"}}<|eot_id|>'
    )
    reply = parse_reply(text, "llama3_json")
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("get_current_conditions", {"location": "San Francisco, CA", "unit": "Fahrenheit"})
    ]
    assert reply.content is None and reply.malformed == []


def test_llama31_python_tag_json_and_builtin_forms() -> None:
    tagged = '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo"}}<|eom_id|>'
    assert calls(tagged, "llama3_json") == [("get_weather", {"city": "Oslo"})]
    builtin = '<|python_tag|>brave_search.call(query="current weather in Menlo Park, California")'
    assert calls(builtin, "llama3_json") == [
        ("brave_search", {"query": "current weather in Menlo Park, California"})
    ]


def test_llama_pythonic_list_of_parallel_calls() -> None:
    # Meta's Llama 4 page (zero-shot function calling), also Llama 3.2's pythonic format.
    text = (
        '[get_weather(city="San Francisco", metric="celsius"), '
        'get_weather(city="Seattle", metric="celsius")]<|eot|>'
    )
    assert calls(text, "llama3_json") == [
        ("get_weather", {"city": "San Francisco", "metric": "celsius"}),
        ("get_weather", {"city": "Seattle", "metric": "celsius"}),
    ]
    assert calls("[get_user_info(user_id=7890, special='black')]", "llama3_json") == [
        ("get_user_info", {"user_id": 7890, "special": "black"})
    ]


def test_llama4_template_writes_calls_back_to_back() -> None:
    # Llama 4's template renders each call as {"name": …, "parameters": …} with no separator.
    text = (
        '{"name": "get_weather", "parameters": {"city": "SF"}}'
        '{"name": "get_time", "parameters": {"tz": "PST"}}'
    )
    assert calls(text, "llama3_json") == [
        ("get_weather", {"city": "SF"}),
        ("get_time", {"tz": "PST"}),
    ]
    separated = '{"name": "a", "parameters": {}}; {"name": "b", "parameters": {"x": true}}'
    assert calls(separated, "llama3_json") == [("a", {}), ("b", {"x": True})]


def test_llama_json_answers_and_prose_are_not_calls() -> None:
    for text in (
        '{"name": "Bob", "age": 30}',
        'Here is the format: {"name": "get_weather", "parameters": {}} and so on.',
        "[1, 2, 3]",
        "The weather in Paris is sunny.",
    ):
        reply = parse_reply(text, "llama3_json")
        assert reply.tool_calls == [] and reply.malformed == [] and reply.content == text


def test_llama_truncated_or_unreadable_calls_are_malformed() -> None:
    for text in (
        '{"name": "get_weather", "parameters": {"city": "Par',
        '<|python_tag|>{"name": "get_weather"',
        "<|python_tag|>import math\nprint(math.pi)",  # code_interpreter: no such tool here
        '[get_weather("SF")]',  # positional: mlx-lm's parser silently drops it
    ):
        reply = parse_reply(text, "llama3_json")
        assert reply.tool_calls == [] and reply.malformed == [text] and reply.content == text


def test_llama_text_before_the_python_tag_is_the_answer() -> None:
    reply = parse_reply('Checking now.<|python_tag|>{"name": "f", "parameters": {}}', "llama3_json")
    assert reply.content == "Checking now." and [c.name for c in reply.tool_calls] == ["f"]


# --- Mistral ----------------------------------------------------------------------------------


def test_mistral_v3_json_list_keeps_the_models_ids() -> None:
    text = (
        '[TOOL_CALLS] [{"name": "get_current_weather", "arguments": {"location": "Paris, France",'
        ' "format": "celsius"}, "id": "a1b2c3d4e"}, {"name": "get_current_weather", "arguments":'
        ' {"location": "Lyon, France", "format": "celsius"}, "id": "f5g6h7i8j"}]</s>'
    )
    reply = parse_reply(text, "mistral")
    assert [c.id for c in reply.tool_calls] == ["a1b2c3d4e", "f5g6h7i8j"]
    assert [c.arguments["location"] for c in reply.tool_calls] == ["Paris, France", "Lyon, France"]
    assert reply.content is None


def test_mistral_v11_calls_each_after_their_marker() -> None:
    text = 'Let me check.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[ARGS]{}'
    reply = parse_reply(text, "mistral")
    assert reply.content == "Let me check."
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {}),
    ]


def test_mistral_call_id_is_not_taken_for_the_name() -> None:
    # mlx-lm's parser names this call "a1b2c3d4e".
    text = '[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Paris"}'
    reply = parse_reply(text, "mistral")
    assert [(c.name, c.id) for c in reply.tool_calls] == [("get_weather", "a1b2c3d4e")]


def test_magistral_reasoning_is_split_and_its_drafted_calls_ignored() -> None:
    text = (
        '[THINK]Maybe [TOOL_CALLS]calculator[ARGS]{"expr": "2+2"} — no, it is easy.[/THINK]'
        "2 + 2 = 4."
    )
    reply = parse_reply(text, "mistral")
    assert reply.tool_calls == []
    assert reply.content == "2 + 2 = 4."
    assert reply.reasoning is not None and reply.reasoning.startswith("Maybe [TOOL_CALLS]")


def test_mistral_truncated_and_broken_calls() -> None:
    cut = '[TOOL_CALLS]get_weather[ARGS]{"city": "Par'
    reply = parse_reply(cut, "mistral")
    assert reply.tool_calls == [] and reply.malformed == [cut] and reply.content == cut

    second_cut = '[TOOL_CALLS]a[ARGS]{}[TOOL_CALLS]b[ARGS]{"x": '
    reply = parse_reply(second_cut, "mistral")
    assert [c.name for c in reply.tool_calls] == ["a"]
    assert reply.malformed == ['[TOOL_CALLS]b[ARGS]{"x":']

    broken_list = '[TOOL_CALLS] [{"name": "f", "arguments": {}}, {"nam'
    reply = parse_reply(broken_list, "mistral")
    assert reply.tool_calls == [] and reply.malformed == [broken_list]

    no_name = "[TOOL_CALLS] I would like to call a tool"
    assert parse_reply(no_name, "mistral").malformed == [no_name]


def test_mistral_ids_its_templates_would_refuse_are_replaced() -> None:
    text = (
        '[TOOL_CALLS] [{"name": "a", "arguments": {}, "id": "call_1"}]'
        "[TOOL_CALLS]b[CALL_ID]xyz[ARGS]{}"
    )
    ids = [c.id for c in parse_reply(text, "mistral").tool_calls]
    assert len(ids) == 2 and all(i.isalnum() and len(i) == 9 for i in ids)
    assert "call_1" not in ids


def test_llama4_text_in_the_python_block_and_calls_after_it() -> None:
    text = (
        "<|python_start|>I'll look both up.<|python_end|>"
        '{"name": "get_weather", "parameters": {"city": "SF"}}<|eot|>'
    )
    reply = parse_reply(text, "llama3_json")
    assert reply.content == "I'll look both up."
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("get_weather", {"city": "SF"})]
    inside = '<|python_start|>[get_weather(city="SF")]<|python_end|>'
    assert calls(inside, "llama3_json") == [("get_weather", {"city": "SF"})]
