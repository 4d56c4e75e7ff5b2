"""What a streaming window asks while a reply comes in: has it begun a call, and to which tool,
so it can show "Calling get_weather…" instead of the markup."""

from __future__ import annotations

import pytest

from inference import TOOL_FORMATS, parse_reply
from inference.toolcalls.formats import call_in_progress

Q = '<|"|>'
# One whole reply per format, its answer first, then a call to get_weather.
REPLIES = {
    "hermes": (
        'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        "</tool_call>"
    ),
    "qwen3_coder": (
        "Checking.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "</function>\n</tool_call>"
    ),
    "llama3_json": '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}',
    "mistral": 'Checking.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
    "harmony": (
        "<|channel|>analysis<|message|>Weather needed.<|end|><|start|>assistant<|channel|>"
        'commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
    ),
    "gemma4": f"Checking.<|tool_call>call:get_weather{{city:{Q}Paris{Q}}}<tool_call|>",
    "glm47": (
        "Checking.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
        "</tool_call>"
    ),
    "kimi_k2": (
        "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>'
    ),
    "kimi_k3": (
        "<|open|>response<|sep|>Checking.<|close|>response<|sep|><|open|>tools<|sep|>"
        '<|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" '
        'type="string"<|sep|>Paris<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>'
    ),
    "deepseek": (
        "Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
        '{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    ),
}


def test_every_format_has_a_reply_here() -> None:
    assert set(REPLIES) == set(TOOL_FORMATS)


@pytest.mark.parametrize("fmt", sorted(REPLIES))
def test_the_call_is_named_once_its_name_is_whole(fmt: str) -> None:
    text = REPLIES[fmt]
    assert [c.name for c in parse_reply(text, fmt).tool_calls] == ["get_weather"]
    seen = [call_in_progress(text[:n], fmt) for n in range(len(text) + 1)]
    named = seen.index("get_weather")
    # Before: nothing, then (for a moment, while markup or a name streams) no name yet.
    assert set(seen[:named]) <= {None, ""}
    assert all(s == "get_weather" for s in seen[named:])
    # The name is never shown cut short.
    assert not any(s and s != "get_weather" for s in seen)
    # Plain answer text never counts as a call.
    assert seen[text.index("Checking") + len("Checking") if "Checking" in text else 0] is None


def test_a_call_begun_inside_the_reasoning_is_not_in_progress() -> None:
    text = '<think>I might use <tool_call>\n{"name": "get_weather", "argu'
    assert call_in_progress(text, "hermes") is None
    drafted = 'Maybe <｜DSML｜function_calls>\n<｜DSML｜invoke name="x">'
    assert call_in_progress(drafted, "deepseek", thinking=True) is None
    assert call_in_progress(text + '": {}}\n</tool_call></think><tool_call>', "hermes") == ""


def test_the_last_of_parallel_calls_is_named() -> None:
    text = REPLIES["hermes"] + '\n<tool_call>\n{"name": "get_time", "arguments": {}}'
    assert call_in_progress(text, "hermes") == "get_time"


def test_an_unknown_format_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown tool format 'qwen'"):
        parse_reply("hi", "qwen")
    with pytest.raises(ValueError, match="hermes"):
        call_in_progress("hi", "qwen")


@pytest.mark.parametrize(
    ("fmt", "text", "expected"),
    [
        ("llama3_json", "<|python_start|>I'll che", None),
        ("llama3_json", "<|python_start|>I'll check.<|python_end|>", None),
        (
            "llama3_json",
            '<|python_start|>Ok.<|python_end|>{"name": "get_weather", "p',
            "get_weather",
        ),
        ("llama3_json", "<|python_tag|>", ""),
        ("llama3_json", '{"name": "get_time"', "get_time"),
        ("llama3_json", "[get_time(", "get_time"),
        ("mistral", '[TOOL_CALLS] [{"name": "get_weather", "argu', "get_weather"),
        ("kimi_k2", "Sure.<|tool_calls_section_begin|>", ""),
        ("deepseek", '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">', "get_weather"),
        ("deepseek", "Sure.<｜DSML｜ calls>\n", ""),
        ("deepseek", '<｜DSML｜ calls>\n<｜DSML｜ invoke name="get_wea', ""),
        ("deepseek", '<｜DSML｜ calls>\n<｜DSML｜ invoke name="get_weather">', "get_weather"),
        ("deepseek", '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="submit"/>', "submit"),
        ("qwen3_coder", "Sure.\n<function=get_wea", ""),
        ("qwen3_coder", "Sure.\n<function=get_weather>\n", "get_weather"),
        ("kimi_k3", "<|open|>response<|sep|>Sure.<|close|>response<|sep|>", None),
        ("kimi_k3", "Sure.<|close|>response<|sep|><|open|>tools<|sep|>", ""),
        ("kimi_k3", '<|open|>tools<|sep|><|open|>call tool="get_wea', ""),
        ("kimi_k3", '<|open|>tools<|sep|><|open|>call tool="a&amp;b" index="1"', "a&b"),
        ("kimi_k3", '<|open|>think<|sep|>maybe <|open|>tools<|sep|><|open|>call tool="x"', None),
        (
            "deepseek",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n",
            "get_time",
        ),
    ],
)
def test_partial_replies_of_other_shapes(fmt: str, text: str, expected: str | None) -> None:
    assert call_in_progress(text, fmt) == expected
