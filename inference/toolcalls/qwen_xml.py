"""Qwen3-Coder's and Qwen3.5's XML calls: `<tool_call>\\n<function=f>\\n<parameter=x>\\n1\\n
</parameter>\\n</function>\\n</tool_call>`; values are text, typed by the tool's schema when given.

The reader is Branchwise's own rather than mlx-lm's `qwen3_coder`, which reads one function per
block, skips a parameter left open and ends a value at the first `</parameter>`. A value here
ends at a `</parameter>` that the markup really continues from (another parameter, the
function's end, or the block's end), so a value may quote the format's own tags (a file that
documents them). What real models write and the servers accept is read too: a last
`</parameter>` missing before `</function>`, and a `<function=…>` written without its
`<tool_call>` (vLLM's and SGLang's Qwen3-Coder readers both take it).
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from inference.toolcalls.calls import (
    CALL_CLOSE,
    CALL_OPEN,
    Block,
    Found,
    Scan,
    Tools,
    found,
    json_calls,
    last_started,
    scan_blocks,
)
from inference.toolcalls.values import properties_of, schema_types, typed

_FUNCTION, _FUNCTION_END = "<function=", "</function>"
_PARAMETER, _PARAMETER_END = "<parameter=", "</parameter>"
# Where a value left open ends: a parameter on a line of its own, or the function's end.
_OPEN_END = re.compile(r"(?<=\n)<parameter=|</function>")
_LINE_PARAMETER = re.compile(r"(?<=\n)<parameter=([^>\n]*)>")
_HEAD = re.compile(r"\s*<(function|parameter)=([^>\n]*)>")


class _Reader:
    """Reads functions from `text`, moving `pos` past each."""

    def __init__(self, text: str, tools: Tools, lenient: bool) -> None:
        self.text = text
        self.pos = 0
        self.tools = tools
        self.lenient = lenient
        self.unseen: set[str] = set()  # the schema's parameters the function has not given

    def function(self) -> Found:
        head = _HEAD.match(self.text, self.pos)
        if head is None or head.group(1) != "function":
            raise ValueError("a call is a <function=…>")
        name = head.group(2).strip()
        schemas = properties_of(self.tools, name)
        self.pos = head.end()
        arguments: dict[str, Any] = {}
        self.unseen = set(schemas)
        while True:
            if self._take(_FUNCTION_END):
                return found(name, arguments)
            head = _HEAD.match(self.text, self.pos)
            if head is None or head.group(1) != "parameter":
                raise ValueError("a function holds parameters")
            key = head.group(2).strip()
            self.pos = head.end()
            self.unseen.discard(key)
            arguments[key] = _value(self._value_text(), schemas.get(key))

    def at_end(self) -> bool:
        return not self.text[self.pos :].strip()

    def _value_text(self) -> str:
        """The text of a value, up to the close the markup continues from. Read leniently, a
        value left open ends where the next parameter or the function's end begins (the model
        dropped its `</parameter>`, as SGLang's and vLLM's readers allow)."""
        start = self.pos
        at = self.text.find(_PARAMETER_END, start)
        while at >= 0:
            after = at + len(_PARAMETER_END)
            if self._continues(after):
                return self._up_to(start, at, after)
            at = self.text.find(_PARAMETER_END, after)
        if not self.lenient:
            raise ValueError("a parameter was left open")
        ends = [m.start() for m in _OPEN_END.finditer(self.text, start)]
        for at in ends:
            if self.text.startswith(_PARAMETER, at) or self._continues(
                at + len(_FUNCTION_END), functions_only=True
            ):
                self.pos = at
                return self.text[start:at]
        raise ValueError("a parameter was left open")

    def _up_to(self, start: int, end: int, after: int) -> str:
        """The value from `start` to its close at `end`, unless a parameter the schema names
        and the call has not given yet begins a line inside it: then the model dropped this
        value's close there (vLLM reads it so), and a value quoting another tool's markup is
        still read whole."""
        for head in _LINE_PARAMETER.finditer(self.text, start, end):
            if head.group(1).strip() in self.unseen:
                self.pos = head.start()
                return self.text[start : head.start()]
        self.pos = after
        return self.text[start:end]

    def _continues(self, pos: int, functions_only: bool = False) -> bool:
        rest = self.text[pos:].lstrip()
        if functions_only:
            return not rest or rest.startswith(_FUNCTION)
        return rest.startswith((_PARAMETER, _FUNCTION_END))

    def _take(self, marker: str) -> bool:
        rest = len(self.text) - len(self.text[self.pos :].lstrip())
        if self.text.startswith(marker, rest):
            self.pos = rest + len(marker)
            return True
        return False


def _value(text: str, schema: Any) -> Any:
    # The template writes each value on lines of its own: one newline each side is markup.
    text = text.removeprefix("\n").removesuffix("\n")
    if text.strip().lower() == "null" and "string" not in schema_types(schema):
        return None
    return typed(text, schema)


def qwen3_coder_call(body: str, tools: Tools = None, lenient: bool = False) -> list[Found]:
    """The calls of one block: one or more functions (or Qwen JSON, which some replies of
    these models write). `lenient` takes a last `</parameter>` left out before `</function>`."""
    if body.lstrip().startswith("{"):
        return json_calls(body)
    reader = _Reader(body, tools, lenient)
    calls = [reader.function()]
    while not reader.at_end():
        calls.append(reader.function())
    return calls


def _bare(body: str, tools: Tools = None, lenient: bool = False) -> list[Found]:
    return qwen3_coder_call(_FUNCTION + body + _FUNCTION_END, tools, lenient)


def qwen3_coder_extract(answer: str, scan: Scan, tools: Tools) -> None:
    blocks = tuple(
        Block(
            open,
            close,
            partial(reader, tools=tools),
            partial(reader, tools=tools, lenient=True),
            trail=trail,
        )
        for open, close, reader, trail in (
            (CALL_OPEN, CALL_CLOSE, qwen3_coder_call, ""),
            (_FUNCTION, _FUNCTION_END, _bare, CALL_CLOSE),
        )
    )
    scan_blocks(answer, blocks, scan)


_FUNCTION_NAME = re.compile(r"\s*<function=([^>\n<]+)>")
_BARE_NAME = re.compile(r"([^>\n<]+)>")


def qwen3_coder_calling(answer: str) -> str | None:
    called = last_started(answer, (CALL_OPEN,), _FUNCTION_NAME)
    if called is None and _FUNCTION in answer:
        return last_started(answer, (_FUNCTION,), _BARE_NAME)
    return called
