"""While a reply streams, nothing of a tool call's markup shows, not even the first characters
of a marker that arrives over several tokens."""

from __future__ import annotations

import pytest

from inference.toolcalls.formats import TOOL_FORMATS
from inference.toolcalls.streaming import hidden_tail

MARKED = {
    "hermes": "<tool_call>",
    "qwen3_coder": "<function=",
    "mistral": "[TOOL_CALLS]",
    "gemma4": "<|tool_call>",
    "kimi_k2": "<|tool_calls_section_begin|>",
    "kimi_k3": "<|open|>tools<|sep|>",
    "deepseek": "<｜DSML｜",
}


@pytest.mark.parametrize(("tool_format", "marker"), sorted(MARKED.items()))
def test_a_marker_is_hidden_from_its_first_character(tool_format: str, marker: str) -> None:
    prose = "Let me check that for you. "
    for cut in range(1, len(marker) + 1):
        text = prose + marker[:cut]
        assert text[: len(text) - hidden_tail(text, tool_format)] == prose
    whole = prose + marker + 'get_weather {"city": "Paris"} and more'
    assert whole[: len(whole) - hidden_tail(whole, tool_format)] == prose


@pytest.mark.parametrize("tool_format", sorted(TOOL_FORMATS))
def test_prose_shows_whole(tool_format: str) -> None:
    if tool_format == "llama3_json":
        text = "It is sunny in Paris today, 24 degrees (said the tool)"
    else:
        text = "It is sunny in Paris today, 24 degrees, said the tool."
    assert hidden_tail(text, tool_format) == 0


def test_a_bare_json_call_hides_the_whole_reply() -> None:
    text = '  {"name": "get_weather", "param'
    assert hidden_tail(text, "llama3_json") == len(text)
