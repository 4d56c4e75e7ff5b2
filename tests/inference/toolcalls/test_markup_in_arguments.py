"""A call whose argument holds its format's own markers (a file documenting `<tool_call>`
tags, a message quoting `[TOOL_CALLS]` or `<|call|>`) is read whole in every family, and a
reasoning marker inside an argument is no reasoning; the reasoning reading per family."""

from __future__ import annotations

import json

import pytest

from inference import parse_reply

DOC = "Use <tool_call> and </tool_call>, [TOOL_CALLS], <|call|>, </parameter> or <|python_tag|>."
Q = '<|"|>'
CASES = {
    "hermes": (
        f'<tool_call>\n{{"name": "write", "arguments": {{"text": {json.dumps(DOC)}}}}}\n'
        "</tool_call>"
    ),
    "qwen3_coder": (
        "<tool_call>\n<function=write>\n<parameter=text>\n"
        f"{DOC}\n</parameter>\n</function>\n</tool_call>"
    ),
    "glm47": f"<tool_call>write<arg_key>text</arg_key><arg_value>{DOC}</arg_value></tool_call>",
    "kimi_k2": (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.write:0"
        f'<|tool_call_argument_begin|>{{"text": {json.dumps(DOC + "<|tool_calls_section_end|>")}}}'
        "<|tool_call_end|><|tool_calls_section_end|>"
    ),
    "kimi_k3": (
        '<|open|>tools<|sep|><|open|>call tool="write" index="1"<|sep|><|open|>argument key="text"'
        f' type="string"<|sep|>{DOC}<|close|>call<|sep|><|close|>argument<|sep|>'
        "<|close|>call<|sep|><|close|>tools<|sep|>"
    ),
    "deepseek": (
        '<｜DSML｜ calls>\n<｜DSML｜ invoke name="write">\n<｜DSML｜ parameter name="text" '
        f'string="true">{DOC}</｜DSML｜ invoke></｜DSML｜ parameter>\n</｜DSML｜ invoke>\n'
        "</｜DSML｜ calls>"
    ),
    "gemma4": f"<|tool_call>call:write{{text:{Q}{DOC} <tool_call|>{Q}}}<tool_call|>",
    "mistral": f'[TOOL_CALLS][{{"name": "write", "arguments": {{"text": {json.dumps(DOC)}}}}}]',
    "llama3_json": (
        '<|python_tag|>{"name": "write", "parameters": '
        f'{{"text": {json.dumps(DOC + "<|python_end|>")}}}}}'
    ),
    "harmony": (
        "<|start|>assistant<|channel|>commentary to=functions.write <|constrain|>json<|message|>"
        f'{{"text": {json.dumps(DOC)}}}<|call|>'
    ),
}
EXPECTED = {
    "kimi_k2": DOC + "<|tool_calls_section_end|>",
    "kimi_k3": DOC + "<|close|>call<|sep|>",
    "deepseek": DOC + "</｜DSML｜ invoke>",
    "gemma4": DOC + " <tool_call|>",
    "llama3_json": DOC + "<|python_end|>",
}


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_an_argument_quoting_the_formats_markers_is_read_whole(fmt: str) -> None:
    reply = parse_reply("Writing it down." + CASES[fmt], fmt)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("write", {"text": EXPECTED.get(fmt, DOC)})
    ]
    assert reply.malformed == []
    assert reply.content == "Writing it down."


def test_a_reasoning_marker_inside_an_argument_is_no_reasoning() -> None:
    text = '<tool_call>\n{"name": "note", "arguments": {"text": "ends with </think> and <think>"}}'
    reply = parse_reply(text + "\n</tool_call>", "hermes")
    assert reply.reasoning is None
    assert reply.tool_calls[0].arguments == {"text": "ends with </think> and <think>"}


QWEN_CALL = '<tool_call>\n{"name": "read", "arguments": {"path": "a.txt"}}\n</tool_call>'


def test_a_qwen_reply_left_inside_its_reasoning_that_ends_in_a_call_made_it() -> None:
    # Qwen3.5 leaves </think> out when it calls (llama.cpp #21118); its template renders the
    # calls after the closed block, so the call is the model's.
    reply = parse_reply("<think>I need the file.\n" + QWEN_CALL, "hermes")
    assert [c.name for c in reply.tool_calls] == ["read"]
    assert reply.reasoning == "I need the file."
    # A draft followed by more thinking is still a draft, and so is a closed block's.
    for text in (
        "<think>I could " + QWEN_CALL + " but first I should ask.",
        "<think>I could " + QWEN_CALL + "</think>Which file?",
    ):
        assert parse_reply(text, "hermes").tool_calls == []


def test_glm_keeps_a_call_in_an_open_reasoning_as_reasoning() -> None:
    call = "<tool_call>read<arg_key>path</arg_key><arg_value>a.txt</arg_value></tool_call>"
    reply = parse_reply("<think>I need the file.\n" + call, "glm47")
    assert reply.tool_calls == [] and "a.txt" in (reply.reasoning or "")


def test_kimi_k3_channels_reasoning_answer_and_calls() -> None:
    text = (
        "step one<|close|>think<|sep|><|open|>response<|sep|>Checking.<|close|>response<|sep|>"
        '<|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|>'
        '<|open|>argument key="days" type="number"<|sep|>3<|close|>argument<|sep|>'
        '<|open|>argument key="city" type="string"<|sep|>  Paris <|close|>argument<|sep|>'
        "<|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>"
    )
    reply = parse_reply(text, "kimi_k3", thinking=True)
    assert reply.reasoning == "step one"
    assert reply.content == "Checking."
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("get_weather", {"days": 3, "city": "  Paris "})
    ]


def test_deepseek_v4_self_closing_and_v41_spaced_calls() -> None:
    v4 = '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="submit"/>\n</｜DSML｜tool_calls>'
    v41 = (
        '<｜DSML｜ calls>\n<｜DSML｜ invoke name="get_weather">\n<｜DSML｜ parameter name="days" '
        'string="false">3</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>'
    )
    assert [(c.name, c.arguments) for c in parse_reply(v4 + v41, "deepseek").tool_calls] == [
        ("submit", {}),
        ("get_weather", {"days": 3}),
    ]


def test_a_deepseek_value_holding_a_self_closing_end_is_read_whole() -> None:
    """A value may quote DSML, `/>` included: the invoke that holds it goes on to its own close
    (found by the round-trip property test: the value ended the call early)."""
    value = "</｜DSML｜ parameter>/>"
    text = (
        '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="A">\n<｜DSML｜parameter name="A" '
        f'string="true">{value}</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>'
    )
    reply = parse_reply(text, "deepseek")
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("A", {"A": value})]
    assert reply.malformed == []


def test_values_typed_by_the_schema_any_of_included() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                        "s": {"type": "string"},
                    },
                },
            },
        }
    ]
    text = (
        "<tool_call>f<arg_key>n</arg_key><arg_value>5</arg_value>"
        "<arg_key>s</arg_key><arg_value>5</arg_value></tool_call>"
    )
    assert parse_reply(text, "glm47", tools=tools).tool_calls[0].arguments == {"n": 5, "s": "5"}


def test_a_mistral_reply_that_stops_at_its_marker_called_nothing() -> None:
    reply = parse_reply("Let me check.[TOOL_CALLS]", "mistral")
    assert reply.tool_calls == [] and reply.malformed == [] and reply.content == "Let me check."
