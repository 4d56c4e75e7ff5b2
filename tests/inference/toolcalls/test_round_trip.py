"""Calls rendered the way each family's chat template renders past calls read back as the same
calls: whatever the names and argument values, parse_reply(render(calls)) == calls.

Each renderer below mirrors the lines of the family's template that write an assistant message's
`tool_calls` (the same excerpts as in `templates/`); values go through `tojson` where the template
does (`json.dumps` here). String values hold any unicode, blanks at their ends, and every
family's own markers (a file that documents `<tool_call>` tags, a message quoting `[TOOL_CALLS]`
or `<|call|>`): a reader must find where a value really ends, not the next marker.

A format that writes strings raw (no escaping) cannot carry every string: the one thing each
leaves out is named in `UNWRITABLE`, text that would read as the format's own markup continuing
(a value holding `</parameter>` and then `<parameter=` is, to any reader, two parameters).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inference import TOOL_FORMATS, parse_reply

Call = tuple[str, dict[str, Any]]

NAMES = st.from_regex(
    r"[A-Za-z_][A-Za-z0-9_]{0,12}(\.[A-Za-z_][A-Za-z0-9_\-]{0,8})?", fullmatch=True
)
KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)
# Every family's markers, so string values quote markup of their own format and of others.
MARKERS = sorted(
    {marker for form in TOOL_FORMATS.values() for marker in (*form.markers, *form.ends)}
    | {m for form in TOOL_FORMATS.values() for pair in form.reasoning for m in pair}
    | {
        "</tool_call>",
        "<function=f>",
        "</function>",
        "<parameter=x>",
        "</parameter>",
        "<arg_key>",
        "</arg_key>",
        "<arg_value>",
        "</arg_value>",
        "<tool_call|>",
        "<|python_end|>",
        "<|tool_call_end|>",
        "<|tool_calls_section_end|>",
        "<｜tool▁call▁end｜>",
        "<｜tool▁calls▁end｜>",
        "</｜DSML｜invoke>",
        "</｜DSML｜ parameter>",
        "</｜DSML｜tool_calls>",
        "<|close|>argument<|sep|>",
        "<|close|>call<|sep|>",
        "<|close|>tools<|sep|>",
        "[ARGS]",
        "<|message|>",
        "<|channel|>",
        "/>",
        '"',
        "\\",
        "{",
        "}",
    }
)
STRINGS = st.lists(
    st.one_of(
        st.text(
            st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=8
        ),
        st.sampled_from(MARKERS),
        st.sampled_from([" ", "  ", "\n", "\t", "é", "漢字", "🙂"]),
    ),
    max_size=5,
).map("".join)
SCALARS = st.one_of(
    STRINGS,
    st.integers(-(10**9), 10**9),
    st.booleans(),
    st.floats(-1e6, 1e6).filter(float.is_integer).map(int),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)),
    max_leaves=6,
)
CALLS = st.lists(
    st.tuples(NAMES, st.dictionaries(KEYS, VALUES, max_size=4)), min_size=1, max_size=3
)

CONTENT = "I'll call the tools."


def tojson(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def hermes(calls: list[Call]) -> str:
    return "".join(
        f'\n<tool_call>\n{{"name": "{n}", "arguments": {tojson(a)}}}\n</tool_call>'
        for n, a in calls
    )


def qwen3_coder(calls: list[Call]) -> str:
    def value(v: Any) -> str:
        return v if isinstance(v, str) else tojson(v)

    return "".join(
        f"\n<tool_call>\n<function={n}>\n"
        + "".join(f"<parameter={k}>\n{value(v)}\n</parameter>\n" for k, v in a.items())
        + "</function>\n</tool_call>"
        for n, a in calls
    )


def llama4_json(calls: list[Call]) -> str:
    # The message's text in the python block, then the calls back to back.
    objects = "".join(f'{{"name": "{n}", "parameters": {tojson(a)}}}' for n, a in calls)
    return f"<|python_start|>{CONTENT}<|python_end|>{objects}"


def mistral_v3(calls: list[Call]) -> str:
    items = [
        f'{{"name": "{n}", "arguments": {tojson(a)}, "id": "abcdefgh{i}"}}'
        for i, (n, a) in enumerate(calls)
    ]
    return "[TOOL_CALLS] [" + ", ".join(items) + "]"


def mistral_v11(calls: list[Call]) -> str:
    return "".join(f"[TOOL_CALLS]{n}[ARGS]{tojson(a)}" for n, a in calls)


def harmony(calls: list[Call]) -> str:
    return "<|channel|>analysis<|message|>Calls needed.<|end|>" + "".join(
        f"<|start|>assistant to=functions.{n}<|channel|>commentary json<|message|>"
        f"{tojson(a)}<|call|>"
        for n, a in calls
    )


def gemma4(calls: list[Call]) -> str:
    def value(v: Any) -> str:  # the template's format_argument macro
        if isinstance(v, str):
            return f'<|"|>{v}<|"|>'
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, dict):
            return "{" + ",".join(f"{k}:{value(x)}" for k, x in v.items()) + "}"
        if isinstance(v, list):
            return "[" + ",".join(value(x) for x in v) + "]"
        return str(v)

    return "".join(f"<|tool_call>call:{n}{value(a)}<tool_call|>" for n, a in calls)


def glm47(calls: list[Call]) -> str:
    def value(v: Any) -> str:
        return v if isinstance(v, str) else tojson(v)

    return "".join(
        f"\n<tool_call>{n}\n"
        + "".join(
            f"<arg_key>{k}</arg_key>\n<arg_value>{value(v)}</arg_value>\n" for k, v in a.items()
        )
        + "</tool_call>"
        for n, a in calls
    )


def kimi_k2(calls: list[Call]) -> str:
    return (
        "<|tool_calls_section_begin|>"
        + "".join(
            f"<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{tojson(a)}<|tool_call_end|>"
            for i, (n, a) in enumerate(calls)
        )
        + "<|tool_calls_section_end|>"
    )


def deepseek_v31(calls: list[Call]) -> str:
    return (
        "<｜tool▁calls▁begin｜>"
        + "".join(
            f"<｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{tojson(a)}<｜tool▁call▁end｜>"
            for n, a in calls
        )
        + "<｜tool▁calls▁end｜>"
    )


def dsml(section: str, space: str) -> Callable[[list[Call]], str]:
    """V4 (`tool_calls`, closing a call without parameters on itself) and V4.1 (`calls`, a
    space after the mark), as `templates/deepseek-v4*.jinja` write them."""

    def parameter(k: str, v: Any) -> str:
        is_string = isinstance(v, str)
        text = v if is_string else tojson(v)
        kind = "true" if is_string else "false"
        head = f'<｜DSML｜{space}parameter name="{k}" string="{kind}">'
        return f"{head}{text}</｜DSML｜{space}parameter>"

    def invoke(n: str, a: dict[str, Any]) -> str:
        if not a and not space:
            return f'<｜DSML｜invoke name="{n}"/>'
        parameters = "".join(parameter(k, v) + "\n" for k, v in a.items())
        return f'<｜DSML｜{space}invoke name="{n}">\n{parameters}</｜DSML｜{space}invoke>\n'

    def render(calls: list[Call]) -> str:
        invokes = "".join(invoke(n, a) for n, a in calls)
        return f"\n\n<｜DSML｜{space}{section}>\n{invokes}</｜DSML｜{space}{section}>"

    return render


def kimi_k3(calls: list[Call]) -> str:
    def argument(k: str, v: Any) -> str:
        kind, text = ("string", v) if isinstance(v, str) else ("json", tojson(v))
        head = f'<|open|>argument key="{html.escape(k)}" type="{kind}"<|sep|>'
        return f"{head}{text}<|close|>argument<|sep|>"

    return (
        "<|open|>tools<|sep|>"
        + "".join(
            f'<|open|>call tool="{html.escape(n)}" index="{i}"<|sep|>'
            + "".join(argument(k, v) for k, v in a.items())
            + "<|close|>call<|sep|>"
            for i, (n, a) in enumerate(calls, start=1)
        )
        + "<|close|>tools<|sep|><|close|>message<|sep|>"
    )


def with_content(fmt: str, text: str) -> str:
    if fmt == "kimi_k3":
        return f"<|open|>response<|sep|>{CONTENT}<|close|>response<|sep|>{text}"
    return text if text.startswith("<|python_start|>") else CONTENT + text


RENDERERS: dict[str, list[Callable[[list[Call]], str]]] = {
    "hermes": [hermes],
    "qwen3_coder": [qwen3_coder],
    "llama3_json": [llama4_json],
    "mistral": [mistral_v3, mistral_v11],
    "harmony": [harmony],
    "gemma4": [gemma4],
    "glm47": [glm47],
    "kimi_k2": [kimi_k2],
    "kimi_k3": [kimi_k3],
    "deepseek": [deepseek_v31, dsml("tool_calls", ""), dsml("calls", " ")],
}
# For the formats that write a top-level value's text raw: a value that reads as that markup
# going on (a close and then what follows a close) cannot be written so that any reader tells
# it from the markup. Gemma's strings have no escape for their quote mark at all.
UNWRITABLE: dict[str, re.Pattern[str]] = {
    # ...and a parameter the schema names, on a line of its own: where a model dropped a
    # value's close, vLLM reads the next parameter there, and so does Branchwise.
    "qwen3_coder": re.compile(r"</parameter>\s*(<parameter=|</function>)|\n<parameter="),
    "glm47": re.compile(r"</arg_value>\s*(<arg_key>|</tool_call>)"),
    "deepseek": re.compile(
        r"</｜DSML｜ ?parameter>\s*(<｜DSML｜ ?parameter|</｜DSML｜ ?invoke>|$)"
    ),
    "kimi_k3": re.compile(r"<\|close\|>argument<\|sep\|>\s*(<\|open\|>argument|<\|close\|>call)"),
    "gemma4": re.compile(re.escape('<|"|>')),
}


def schema(calls: list[Call]) -> list[dict[str, Any]]:
    """The tools' schemas, which type the values Qwen3-Coder and GLM write as text."""
    kinds = {str: "string", bool: "boolean", int: "integer", float: "number", dict: "object"}
    return [
        {
            "type": "function",
            "function": {
                "name": n,
                "parameters": {
                    "type": "object",
                    "properties": {k: {"type": kinds.get(type(v), "array")} for k, v in a.items()},
                },
            },
        }
        for n, a in calls
    ]


def test_every_format_has_a_renderer() -> None:
    assert set(RENDERERS) == set(TOOL_FORMATS)


def writable(fmt: str, calls: list[Call]) -> bool:
    pattern = UNWRITABLE.get(fmt)
    if pattern is None:
        return True
    texts = [v if isinstance(v, str) else tojson(v) for _, a in calls for v in a.values()]
    return not any(pattern.search(text) for text in texts)


@pytest.mark.parametrize(
    ("fmt", "render"),
    [(fmt, render) for fmt, renderers in RENDERERS.items() for render in renderers],
    ids=lambda x: x if isinstance(x, str) else getattr(x, "__qualname__", ""),
)
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_rendered_calls_read_back_the_same(
    fmt: str, render: Callable[[list[Call]], str], data: st.DataObject
) -> None:
    calls = data.draw(CALLS.filter(lambda calls: writable(fmt, calls)))
    # A name may come twice with other arguments; the schema is by name, so keep one per name.
    calls = list({n: (n, a) for n, a in calls}.values())
    text = with_content(fmt, render(calls))
    reply = parse_reply(text, fmt, tools=schema(calls))
    assert [(c.name, c.arguments) for c in reply.tool_calls] == calls, text
    assert reply.malformed == []
    assert reply.content == CONTENT
