"""Qwen's two call formats, as their published templates render them: Hermes-style JSON in
`<tool_call>` (Qwen2.5, Qwen3, Hermes 2 Pro/3) and Qwen3-Coder's XML."""

from __future__ import annotations

import re

from inference import parse_reply

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        },
    },
}

# Qwen3 in thinking mode: thoughts, then two calls, as the Qwen3 template renders past calls.
QWEN3_PARALLEL = """<think>
The user wants the weather in two cities, so two calls.
</think>

<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
</tool_call>
<tool_call>
{"name": "get_weather", "arguments": {"city": "Tokyo", "unit": "celsius"}}
</tool_call><|im_end|>"""


def test_qwen25_single_call_with_an_answer_before_it() -> None:
    reply = parse_reply(
        'Let me check.\n<tool_call>\n{"name": "get_current_temperature", "arguments": '
        '{"location": "San Francisco, CA, USA"}}\n</tool_call>',
        "hermes",
    )
    assert reply.content == "Let me check."
    assert reply.reasoning is None
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("get_current_temperature", {"location": "San Francisco, CA, USA"})
    ]
    assert reply.malformed == []


def test_qwen3_parallel_calls_come_in_order_after_the_reasoning() -> None:
    reply = parse_reply(QWEN3_PARALLEL, "hermes")
    assert reply.reasoning == "The user wants the weather in two cities, so two calls."
    assert reply.content is None
    assert [c.arguments["city"] for c in reply.tool_calls] == ["Paris", "Tokyo"]


def test_call_ids_are_stable_distinct_and_fit_every_template() -> None:
    first, again = parse_reply(QWEN3_PARALLEL, "hermes"), parse_reply(QWEN3_PARALLEL, "hermes")
    ids = [c.id for c in first.tool_calls]
    assert ids == [c.id for c in again.tool_calls]
    assert len(set(ids)) == 2
    # Mistral's templates refuse any id but 9 letters and digits.
    assert all(re.fullmatch(r"[A-Za-z0-9]{9}", i) for i in ids)
    other = parse_reply(QWEN3_PARALLEL.replace("Tokyo", "Oslo"), "hermes")
    assert other.tool_calls[0].id != ids[0]


def test_a_call_written_inside_the_reasoning_is_not_a_call() -> None:
    reply = parse_reply(
        '<think>\nI could run <tool_call>\n{"name": "delete_file", "arguments": {"path": "/"}}\n'
        "</tool_call> but I should ask first.\n</think>\n\nWhich file should I delete?",
        "hermes",
    )
    assert reply.tool_calls == []
    assert reply.malformed == []
    assert reply.content == "Which file should I delete?"
    assert "delete_file" in (reply.reasoning or "")


def test_thinking_opened_by_the_prompt_keeps_the_first_part_as_reasoning() -> None:
    # Qwen3-2507 thinking models: the generation prompt ends with "<think>\n".
    text = (
        'The city is Paris.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": '
        '{"city": "Paris"}}\n</tool_call>'
    )
    reply = parse_reply(text, "hermes", thinking=True)
    assert reply.reasoning == "The city is Paris."
    assert [c.name for c in reply.tool_calls] == ["get_weather"]
    # Without the flag, a closing marker with no opening one still says the prompt opened it.
    assert parse_reply(text, "hermes") == reply


def test_reasoning_cut_short_holds_no_call() -> None:
    reply = parse_reply('Thinking about <tool_call>\n{"name": "x"', "hermes", thinking=True)
    assert reply.tool_calls == [] and reply.content is None
    assert reply.reasoning == 'Thinking about <tool_call>\n{"name": "x"'


def test_malformed_json_stays_in_the_answer_and_is_listed() -> None:
    bad = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"\n</tool_call>'
    reply = parse_reply(f"Checking.\n{bad}", "hermes")
    assert reply.tool_calls == []
    assert reply.malformed == [bad]
    assert reply.content == f"Checking.\n{bad}"


def test_json_that_is_not_a_call_is_malformed() -> None:
    for body in ('{"arguments": {}}', '{"name": "f", "arguments": [1]}', '"get_weather"'):
        reply = parse_reply(f"<tool_call>{body}</tool_call>", "hermes")
        assert reply.tool_calls == [] and len(reply.malformed) == 1, body


def test_a_truncated_call_is_no_call_and_the_earlier_ones_stand() -> None:
    text = (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_weather", "argu'
    )
    reply = parse_reply(text, "hermes")
    assert [c.arguments for c in reply.tool_calls] == [{"city": "Paris"}]
    assert reply.malformed == ['<tool_call>\n{"name": "get_weather", "argu']
    assert reply.content == '<tool_call>\n{"name": "get_weather", "argu'


def test_hermes_arguments_first_and_as_a_json_string() -> None:
    reply = parse_reply(
        '<tool_call>\n{"arguments": {"a": 1}, "name": "add"}\n</tool_call>'
        '<tool_call>{"name": "add", "arguments": "{\\"a\\": 2}"}</tool_call>',
        "hermes",
    )
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("add", {"a": 1}),
        ("add", {"a": 2}),
    ]


# --- Qwen3-Coder XML --------------------------------------------------------------------------

CODER_CALL = """I'll look that up.
<tool_call>
<function=get_weather>
<parameter=city>
Paris
</parameter>
<parameter=days>
3
</parameter>
</function>
</tool_call>"""


def test_qwen3_coder_values_are_typed_by_the_schema_when_given() -> None:
    typed = parse_reply(CODER_CALL, "qwen3_coder", tools=[WEATHER_TOOL])
    assert typed.content == "I'll look that up."
    assert [(c.name, c.arguments) for c in typed.tool_calls] == [
        ("get_weather", {"city": "Paris", "days": 3})
    ]
    untyped = parse_reply(CODER_CALL, "qwen3_coder")
    assert untyped.tool_calls[0].arguments == {"city": "Paris", "days": "3"}


def test_qwen3_coder_keeps_multiline_values_verbatim() -> None:
    reply = parse_reply(
        "<tool_call>\n<function=write_file>\n<parameter=path>\nmain.py\n</parameter>\n"
        "<parameter=content>\ndef f():\n    return 1\n</parameter>\n</function>\n</tool_call>",
        "qwen3_coder",
    )
    assert reply.tool_calls[0].arguments == {"path": "main.py", "content": "def f():\n    return 1"}


def test_qwen3_coder_parallel_calls_and_two_functions_in_one_block() -> None:
    two_blocks = CODER_CALL + CODER_CALL.split("\n", 1)[1].replace("Paris", "Rome")
    assert [c.arguments["city"] for c in parse_reply(two_blocks, "qwen3_coder").tool_calls] == [
        "Paris",
        "Rome",
    ]
    # mlx-lm's parser merges a second function in the same block into the first.
    one_block = (
        "<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n"
        "<function=b>\n</function>\n</tool_call>"
    )
    assert [(c.name, c.arguments) for c in parse_reply(one_block, "qwen3_coder").tool_calls] == [
        ("a", {"x": "1"}),
        ("b", {}),
    ]


def test_qwen3_coder_a_cut_call_is_malformed() -> None:
    for text in (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nPar",
        "<tool_call>\n<function=a>\n<parameter=x>\n1\n</tool_call>",
    ):
        reply = parse_reply(text, "qwen3_coder")
        assert reply.tool_calls == [] and reply.malformed == [text] and reply.content == text


def test_qwen3_coder_lenient_endings_the_servers_accept() -> None:
    # The last </parameter> left out before </function> (vLLM and SGLang read the call), and
    # a <function=…> written without its <tool_call> opener, its closer still written.
    open_parameter = "<tool_call>\n<function=a>\n<parameter=x>\n1\n</function>\n</tool_call>"
    bare = "Sure.\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>"
    for text in (open_parameter, bare):
        reply = parse_reply(text, "qwen3_coder")
        assert [(c.name, c.arguments) for c in reply.tool_calls] == [("a", {"x": "1"})]
        assert reply.malformed == []
    assert parse_reply(bare, "qwen3_coder").content == "Sure."


def test_qwen3_coder_call_inside_thinking_is_ignored() -> None:
    reply = parse_reply(f"<think>{CODER_CALL}</think>No call needed.", "qwen3_coder")
    assert reply.tool_calls == [] and reply.content == "No call needed."


def test_either_qwen_body_is_read_whichever_template_named_the_format() -> None:
    json_call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    xml_call = CODER_CALL.split("\n", 1)[1]
    for text, arguments in (
        (json_call, {"city": "Paris"}),
        (xml_call, {"city": "Paris", "days": "3"}),
    ):
        for fmt in ("hermes", "qwen3_coder"):
            reply = parse_reply(text, fmt)
            assert [(c.name, c.arguments) for c in reply.tool_calls] == [("get_weather", arguments)]


def test_a_call_cut_short_by_the_next_one_does_not_swallow_it() -> None:
    cut = '<tool_call>\n{"name": "get_weather", "arguments": {"ci'
    whole = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
    reply = parse_reply(cut + "\n" + whole, "hermes")
    assert [c.name for c in reply.tool_calls] == ["get_time"]
    assert reply.malformed == [cut]


def test_a_call_before_a_lone_closing_marker_was_reasoning() -> None:
    # The caller did not say the prompt opened the block; the lone </think> says so.
    text = (
        '<tool_call>\n{"name": "rm", "arguments": {"path": "/"}}\n</tool_call> is unsafe.\n'
        "</think>\n\nI won't do that."
    )
    reply = parse_reply(text, "hermes")
    assert reply.tool_calls == [] and reply.content == "I won't do that."
