"""DeepSeek's calls (V3, R1, V3.1, V3.2, V4), which mlx-lm has no parser for.

- V3 and R1: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\\n
  ```json\\n{…}\\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>` (the type, then the name and a JSON
  code block).
- V3.1: the same markers, `<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{…}<｜tool▁call▁end｜>`.
- V3.2 and V4 (DSML): `<｜DSML｜function_calls>` (V4: `<｜DSML｜tool_calls>`) around
  `<｜DSML｜invoke name="get_weather">` blocks of `<｜DSML｜parameter name="city" string="true">
  Paris</｜DSML｜parameter>`; `string="false"` values are JSON. V4 may close a call with no
  parameters on itself: `<｜DSML｜invoke name="submit"/>`.
- V4.1: the same markup with a space after the DSML mark: `<｜DSML｜ calls>`, `<｜DSML｜ invoke
  name="…">`, `<｜DSML｜ parameter name="…" string="true">`.

V4.1 also writes an invoke without its section, or with a JSON object for a body, and its
reference reader takes both. A string value ends at a parameter close the markup continues from
(the next parameter or the invoke's end), a JSON value where its JSON does, so either may quote
DSML itself.

All reason in `<think>…</think>`, split off first by the dispatcher (V3.1 and later open the block
in the generation prompt in thinking mode).
"""

from __future__ import annotations

import json
import re
from functools import partial
from typing import Any

from inference.toolcalls.calls import (
    Block,
    Found,
    Scan,
    Tools,
    found,
    json_object,
    json_prefix,
    scan_blocks,
)
from inference.toolcalls.values import properties_of, schema_types, typed

_SEP = "<｜tool▁sep｜>"
_V3_CODE = re.compile(r"\s*([^\s`]+)\s*```(?:json)?\s*(.*?)\s*```\s*", re.DOTALL)
_DSML = "｜DSML｜"
_SPACINGS = ("", " ")  # V3.2 and V4 write no space after the mark, V4.1 one
_NAME_ATTRIBUTE = re.compile(r'\s*name="([^"]*)"\s*')
_PARAMETER = re.compile(
    rf'\s*<{_DSML} ?parameter\s+name="([^"]*)"(?:\s+string="(true|false)")?\s*>'
)
_PARAMETER_END = re.compile(rf"</{_DSML} ?parameter>")


def _v3(body: str) -> list[Found]:
    head, sep, rest = body.partition(_SEP)
    if not sep:
        raise ValueError("no separator in the call")
    code = _V3_CODE.fullmatch(rest) if head.strip() == "function" and "```" in rest else None
    if code is not None:  # V3 and R1: the type before the separator, a code block after the name
        return [found(code.group(1), json.loads(code.group(2)))]
    arguments, end = json_prefix(rest)  # V3.1: the name, then the JSON arguments
    if rest[end:].strip():
        raise ValueError("text after the arguments")
    return [found(head, arguments)]


def _invoke(body: str, tools: Tools) -> list[Found]:
    head = _NAME_ATTRIBUTE.match(body)
    if head is None:
        raise ValueError("an invoke names its function")
    name = head.group(1)
    rest = body[head.end() :]
    if rest == "/>":  # self-closing: <｜DSML｜invoke name="submit"/>
        return [found(name)]
    if not rest.startswith(">") or rest.endswith("/>"):
        # A `/>` after the head's `>` is inside a value: the invoke goes on to its close.
        raise ValueError("an invoke's head ends with > and the invoke with its close")
    pos = head.end() + 1
    if body[pos:].lstrip().startswith("{"):  # V4.1's reference reader takes a JSON body too
        return [found(name, json.loads(body[pos:]))]
    schemas = properties_of(tools, name)
    arguments: dict[str, Any] = {}
    while body[pos:].strip():
        parameter = _PARAMETER.match(body, pos)
        if parameter is None:
            raise ValueError("stray text in the call")
        key, is_string = parameter.group(1), parameter.group(2)
        arguments[key], pos = _value(body, parameter.end(), is_string, schemas.get(key))
    return [found(name, _unwrapped(arguments, schemas))]


def _unwrapped(arguments: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    """DeepSeek sometimes wraps all of a call's arguments in one `arguments` or `input`
    parameter; vLLM unwraps it when the schema has no such parameter and names every key
    inside, and so does this (without a schema there is nothing to tell a wrapper by)."""
    if len(arguments) != 1 or not schemas:
        return arguments
    ((key, value),) = arguments.items()
    if key not in ("arguments", "input") or key in schemas:
        return arguments
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return arguments
    inner = json_object(value)
    return inner if inner and set(inner) <= set(schemas) else arguments


def _value(body: str, start: int, is_string: str | None, schema: Any) -> tuple[Any, int]:
    """A parameter's value and where the markup goes on after its close.

    `string="false"` marks JSON, whose end is where its JSON ends when it is whole; values are
    typed by the tool's schema first, as vLLM's reader types them (`string="true"` with an
    integer schema is an integer, JSON `null` for a string schema is the text "null"), and a
    value that is not what it says stays its text, as vLLM and SGLang keep it."""
    if is_string == "false":
        try:
            _, end = json_prefix(body, start)
        except ValueError:
            pass  # not JSON after all: its close is found as a string's is
        else:
            close = _PARAMETER_END.match(body, len(body) - len(body[end:].lstrip()))
            if close is not None:
                return _typed(body[start:end], is_string, schema), close.end()
    for close in _PARAMETER_END.finditer(body, start):
        if _PARAMETER.match(body, close.end()) or not body[close.end() :].strip():
            return _typed(body[start : close.start()], is_string, schema), close.end()
    raise ValueError("a parameter was left open")


def _typed(text: str, is_string: str | None, schema: Any) -> Any:
    if schema_types(schema):
        return typed(text, schema)
    return typed(text, None, untyped="json" if is_string == "false" else "text")


_V3_CALL = Block("<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", _v3)
_V3_SECTION = Block("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", items=(_V3_CALL,))
_INVOKE_OPENS = tuple(f"<{_DSML}{space}invoke" for space in _SPACINGS)
_SECTION_OPENS = tuple(
    f"<{_DSML}{space}{tag}>"
    for space in _SPACINGS
    for tag in ("function_calls", "tool_calls", "calls")
)


def _dsml_blocks(tools: Tools) -> tuple[Block, ...]:
    invokes = tuple(
        Block(open, f"</{_DSML}{space}invoke>", partial(_invoke, tools=tools), also=("/>",))
        for open, space in zip(_INVOKE_OPENS, _SPACINGS, strict=True)
    )
    sections = tuple(Block(open, "</" + open[1:], items=invokes) for open in _SECTION_OPENS)
    # V4.1's reference reader (vLLM's, which SGLang's gateway mirrors) also takes an invoke
    # written without its section; V4's does not, so only the spaced spelling counts bare.
    return (*sections, invokes[1])


def deepseek_extract(answer: str, scan: Scan, tools: Tools) -> None:
    scan_blocks(answer, (_V3_SECTION, *_dsml_blocks(tools)), scan)


_V3_NAME = re.compile(r"\s*(?:function<｜tool▁sep｜>)?\s*([^\s<`]+?)\s*(?:\n|<｜tool▁sep｜>|```)")
_DSML_NAME = re.compile(r'\s*name="([^"]+)"')
_SECTIONS = (_V3_SECTION.open, *_SECTION_OPENS)


def deepseek_calling(answer: str) -> str | None:
    v3 = answer.rfind(_V3_CALL.open)
    dsml, opener = max((answer.rfind(open), open) for open in _INVOKE_OPENS)
    if v3 < 0 and dsml < 0:
        return "" if any(section in answer for section in _SECTIONS) else None
    if v3 > dsml:
        match = _V3_NAME.match(answer, v3 + len(_V3_CALL.open))
    else:
        match = _DSML_NAME.match(answer, dsml + len(opener))
    return match.group(1) if match else ""
