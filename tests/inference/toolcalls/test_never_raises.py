"""Model output is untrusted: whatever the text, reading it as any format returns a reply and
never raises, and nothing that could not be read is dropped from the answer."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from inference import TOOL_FORMATS, parse_reply
from inference.toolcalls.formats import call_in_progress

# Every marker of every family, and pieces of call bodies, so random text reaches deep into the
# readers (a marker followed by half a call, calls in reasoning, nested or unclosed values).
FRAGMENTS = [
    "<think>",
    "</think>",
    "[THINK]",
    "[/THINK]",
    "<|channel>thought",
    "<channel|>",
    "<tool_call>",
    "</tool_call>",
    "<function=f>",
    "</function>",
    "<parameter=x>",
    "</parameter>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "<|python_tag|>",
    "<|python_start|>",
    "<|python_end|>",
    "<|eot_id|>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "</s>",
    "<|start|>",
    "assistant",
    "<|channel|>",
    "analysis",
    "final",
    "commentary",
    " to=functions.f",
    "<|constrain|>json",
    "<|message|>",
    "<|end|>",
    "<|call|>",
    "<|return|>",
    "<|tool_call>",
    "<tool_call|>",
    "call:f",
    '<|"|>',
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "functions.f:0",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<|tool_calls_section_end|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "function",
    "<｜tool▁sep｜>",
    "```json",
    "```",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
    "<｜DSML｜function_calls>",
    "</｜DSML｜function_calls>",
    '<｜DSML｜invoke name="f">',
    "</｜DSML｜invoke>",
    '<｜DSML｜parameter name="x" string="false">',
    "</｜DSML｜parameter>",
    "<｜DSML｜ calls>",
    "</｜DSML｜ calls>",
    '<｜DSML｜ invoke name="f">',
    '<｜DSML｜invoke name="f"/>',
    "</｜DSML｜ invoke>",
    '<｜DSML｜ parameter name="x" string="true">',
    "</｜DSML｜ parameter>",
    "<|open|>think<|sep|>",
    "<|close|>think<|sep|>",
    "<|open|>response<|sep|>",
    "<|close|>response<|sep|>",
    "<|open|>tools<|sep|>",
    '<|open|>call tool="f" index="1"<|sep|>',
    '<|open|>argument key="x" type="number"<|sep|>',
    "<|close|>argument<|sep|>",
    "<|close|>call<|sep|>",
    "<|close|>tools<|sep|>",
    "<|close|>message<|sep|>",
    '{"name": "f", "arguments": {"x": 1}}',
    '{"name": "f", "parameters": ',
    '"x"',
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "1",
    "true",
    "null",
    "f(",
    "x=",
    ")",
    "[f(x=1)]",
    " ",
    "\n",
    "\\",
    "{" * 50,
    "[" * 50,
]
SOUP = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=30).map(
    "".join
)


def check(text: str, thinking: bool) -> None:
    for fmt in TOOL_FORMATS:
        reply = parse_reply(text, fmt, thinking)
        for call in reply.tool_calls:
            assert isinstance(call.name, str) and call.name
            assert isinstance(call.arguments, dict)
        ids = [call.id for call in reply.tool_calls]
        assert len(set(ids)) == len(ids)
        for raw in reply.malformed:
            assert raw in (reply.content or "")
        if not any(marker in text for marker in MARKUP) and not reply.tool_calls:
            # Text without markup is all answer, or all reasoning when the prompt opened it.
            inside = thinking and TOOL_FORMATS[fmt].reasoning
            assert (reply.reasoning if inside else reply.content) == (text.strip() or None)
        name = call_in_progress(text, fmt, thinking)
        assert name is None or isinstance(name, str)


MARKUP = {f for f in FRAGMENTS if f.strip() and (f.startswith(("<", "[")) or f.endswith(">"))}
for _form in TOOL_FORMATS.values():
    MARKUP.update(_form.ends, _form.markers, *_form.reasoning)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.booleans())
def test_any_text_reads_without_raising(text: str, thinking: bool) -> None:
    check(text, thinking)


@settings(max_examples=300, deadline=None)
@given(SOUP, st.booleans())
def test_markup_soup_reads_without_raising(text: str, thinking: bool) -> None:
    check(text, thinking)
