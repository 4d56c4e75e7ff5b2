"""GLM's calls (GLM-4.5 to GLM-5): `<tool_call>f\\n<arg_key>x</arg_key>\\n<arg_value>1
</arg_value>\\n</tool_call>` (4.7 and later drop the newlines). Values are typed by the tool's
schema, else read as JSON when they are JSON.

The reader is Branchwise's own rather than mlx-lm's `glm47`, which turns any text into a call (a
bad block becomes a call named "unknown" or after its first word) and ends a value at the first
`</arg_value>`. Here a value ends at an `</arg_value>` the markup continues from (the next key,
or the block's end), so it may quote the format's tags; its blanks are its own (vLLM keeps
`'  Beijing  '` as written); and a last `</arg_value>` the model left out before `</tool_call>`
is tolerated, as vLLM and SGLang tolerate it.
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
from inference.toolcalls.values import properties_of, typed

_KEY, _KEY_END = "<arg_key>", "</arg_key>"
_VALUE, _VALUE_END = "<arg_value>", "</arg_value>"


def _call(body: str, tools: Tools = None, lenient: bool = False) -> list[Found]:
    if body.strip().startswith("{"):  # some GLM replies write Hermes JSON in the block
        return json_calls(body)
    name, marker, rest = body.partition(_KEY)
    schemas = properties_of(tools, name.strip())
    arguments: dict[str, Any] = {}
    text = marker + rest
    pos = 0
    while text[pos:].strip():
        key_start = _expect(text, pos, _KEY)
        key_end = text.find(_KEY_END, key_start)
        if key_end < 0:
            raise ValueError("a key was left open")
        key = text[key_start:key_end].strip()
        value_start = _expect(text, key_end + len(_KEY_END), _VALUE)
        value_end, pos = _value_end(text, value_start, lenient)
        arguments[key] = typed(text[value_start:value_end], schemas.get(key), untyped="json")
    return [found(name, arguments)]


def _expect(text: str, pos: int, marker: str) -> int:
    at = len(text) - len(text[pos:].lstrip())
    if not text.startswith(marker, at):
        raise ValueError(f"expected {marker}")
    return at + len(marker)


def _value_end(text: str, start: int, lenient: bool) -> tuple[int, int]:
    """Where the value begun at `start` ends, and where the markup goes on after it."""
    at = text.find(_VALUE_END, start)
    while at >= 0:
        after = at + len(_VALUE_END)
        rest = text[after:].lstrip()
        if not rest or rest.startswith(_KEY):
            return at, after
        at = text.find(_VALUE_END, after)
    if not lenient or _KEY in text[start:] or not text[start:].strip():
        raise ValueError("a value was left open")
    # The last value, its close left out: the block's end closes it (its newline is markup).
    return len(text.rstrip("\n")), len(text)


def glm47_extract(answer: str, scan: Scan, tools: Tools) -> None:
    strict, lenient = partial(_call, tools=tools), partial(_call, tools=tools, lenient=True)
    scan_blocks(answer, (Block(CALL_OPEN, CALL_CLOSE, strict, lenient),), scan)


_GLM_NAME = re.compile(r"\s*([^\s<>{]+?)\s*(?:<arg_key>|</tool_call>|\n)")


def glm47_calling(answer: str) -> str | None:
    return last_started(answer, (CALL_OPEN,), _GLM_NAME)
