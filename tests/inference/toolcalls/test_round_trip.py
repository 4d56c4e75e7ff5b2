"""Calls rendered the way each family's chat template renders past calls read back as the same
calls: whatever the names and argument values, parse_reply(render(calls)) == calls.

Each renderer below mirrors the lines of the family's template that write an assistant message's
`tool_calls` (the same excerpts as in `templates/`); values go through `tojson` where the template
does (`json.dumps` here). Strings hold no `<` (every family's markup starts with one, and no
template escapes it) and no blanks at their ends (GLM's reader trims them).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from inference import TOOL_FORMATS, parse_reply

Call = tuple[str, dict[str, Any]]

NAMES = st.from_regex(
    r"[A-Za-z_][A-Za-z0-9_]{0,12}(\.[A-Za-z_][A-Za-z0-9_\-]{0,8})?", fullmatch=True
)
KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)
STRINGS = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="<[\x00"), max_size=20
).filter(lambda s: s == s.strip() and s.lower() != "null")
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


def deepseek_dsml(calls: list[Call]) -> str:
    def parameter(k: str, v: Any) -> str:
        is_string = isinstance(v, str)
        text = v if is_string else tojson(v)
        kind = "true" if is_string else "false"
        return f'<｜DSML｜parameter name="{k}" string="{kind}">{text}</｜DSML｜parameter>'

    invokes = "\n".join(
        f'<｜DSML｜invoke name="{n}">\n'
        + "\n".join(parameter(k, v) for k, v in a.items())
        + "\n</｜DSML｜invoke>"
        for n, a in calls
    )
    return f"\n\n<｜DSML｜tool_calls>\n{invokes}\n</｜DSML｜tool_calls>"


RENDERERS: dict[str, list[Callable[[list[Call]], str]]] = {
    "hermes": [hermes],
    "qwen3_coder": [qwen3_coder],
    "llama3_json": [llama4_json],
    "mistral": [mistral_v3, mistral_v11],
    "harmony": [harmony],
    "gemma4": [gemma4],
    "glm47": [glm47],
    "kimi_k2": [kimi_k2],
    "deepseek": [deepseek_v31, deepseek_dsml],
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


@settings(max_examples=60, deadline=None)
@given(CALLS)
def test_rendered_calls_read_back_the_same(calls: list[Call]) -> None:
    # A name may come twice with other arguments; the schema is by name, so keep one per name.
    calls = list({n: (n, a) for n, a in calls}.values())
    for fmt, renderers in RENDERERS.items():
        for render in renderers:
            text = render(calls)
            if not text.startswith("<|python_start|>"):
                text = CONTENT + text
            reply = parse_reply(text, fmt, tools=schema(calls))
            assert [(c.name, c.arguments) for c in reply.tool_calls] == calls, (fmt, text)
            assert reply.malformed == []
            assert reply.content == CONTENT, fmt
