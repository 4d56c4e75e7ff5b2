"""The families whose calls sit between tags: Hermes/Qwen JSON, Qwen3-Coder XML, GLM and Kimi K2.

- hermes (Qwen2.5, Qwen3, Hermes 2 Pro/3): `<tool_call>\\n{"name": "f", "arguments": {…}}\\n
  </tool_call>`, one block per call.
- qwen3_coder (Qwen3-Coder, Qwen3.5): `<tool_call>\\n<function=f>\\n<parameter=x>\\n1\\n</parameter>
  \\n</function>\\n</tool_call>`; values are text, typed by the tool's schema when given.
- glm47 (GLM-4.5 to GLM-5): `<tool_call>f\\n<arg_key>x</arg_key>\\n<arg_value>1</arg_value>\\n
  </tool_call>` (4.7 drops the newlines); typed by the schema, else read as JSON when they are.
- kimi_k2: `<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0
  <|tool_call_argument_begin|>{…}<|tool_call_end|>…<|tool_calls_section_end|>`; the
  `functions.f:0` id is kept, since Kimi's template writes it back into the history.

Each reads one call with mlx-lm's public `parse_tool_call` of that family, after checking the
call's shape, which mlx-lm does not (see each reader for what it gets wrong).
"""

from __future__ import annotations

import re
from functools import partial

from mlx_lm.tool_parsers import glm47, json_tools, kimi_k2, qwen3_coder

from inference.toolcalls.calls import (
    Block,
    Found,
    Scan,
    Tools,
    found,
    found_in_json,
    last_started,
    scan_blocks,
)

_CALL_OPEN, _CALL_CLOSE = "<tool_call>", "</tool_call>"


# --- hermes -------------------------------------------------------------------------------------


def _hermes(body: str, tools: Tools = None) -> list[Found]:
    if body.lstrip().startswith("<function="):  # Qwen3-Coder's XML from a Qwen JSON template
        return _qwen3_coder(body, tools)
    # mlx-lm's json_tools returns whatever JSON it reads; a call needs a name and an object.
    data = json_tools.parse_tool_call(body)
    return [found_in_json(item) for item in (data if isinstance(data, list) else [data])]


def hermes_extract(answer: str, scan: Scan, tools: Tools) -> None:
    scan_blocks(answer, (Block(_CALL_OPEN, _CALL_CLOSE, partial(_hermes, tools=tools)),), scan)


_HERMES_NAME = re.compile(r'\s*\{\s*"name"\s*:\s*"([^"\\]+)"')


def hermes_calling(answer: str) -> str | None:
    return last_started(answer, (_CALL_OPEN,), _HERMES_NAME)


# --- qwen3_coder --------------------------------------------------------------------------------

_FUNCTION = re.compile(r"<function=.*?</function>", re.DOTALL)


def _qwen3_coder(body: str, tools: Tools = None) -> list[Found]:
    if body.lstrip().startswith("{"):  # Qwen JSON from a Qwen3-Coder template
        return _hermes(body, tools)
    # mlx-lm reads only one function per block (a second one is merged into the first and
    # lost), and skips a parameter left open; so each function is cut out and checked here.
    functions = _FUNCTION.findall(body)
    if not functions or _FUNCTION.sub("", body).strip():
        raise ValueError("stray or unclosed text in the call")
    calls = []
    for function in functions:
        if function.count("<parameter=") != function.count("</parameter>"):
            raise ValueError("a parameter was left open")
        parsed = qwen3_coder.parse_tool_call(function, tools)
        calls.append(found(parsed["name"], parsed["arguments"]))
    return calls


def qwen3_coder_extract(answer: str, scan: Scan, tools: Tools) -> None:
    reader = partial(_qwen3_coder, tools=tools)
    scan_blocks(answer, (Block(_CALL_OPEN, _CALL_CLOSE, reader),), scan)


_FUNCTION_NAME = re.compile(r"\s*<function=([^>\n<]+)>")


def qwen3_coder_calling(answer: str) -> str | None:
    return last_started(answer, (_CALL_OPEN,), _FUNCTION_NAME)


# --- glm47 --------------------------------------------------------------------------------------

_GLM_PAIR = re.compile(r"<arg_key>.*?</arg_key>\s*<arg_value>.*?</arg_value>", re.DOTALL)


def _glm(body: str, tools: Tools = None) -> list[Found]:
    if body.strip().startswith("{"):  # some GLM replies write Hermes JSON in the block
        return _hermes(body, tools)
    # mlx-lm turns any text into a call (a bad block becomes a call named "unknown" or named
    # after its first word), so the shape is checked first: a name, then whole pairs only.
    name, marker, rest = body.partition("<arg_key>")
    if _GLM_PAIR.sub("", marker + rest).strip():
        raise ValueError("stray or unclosed text in the call")
    parsed = glm47.parse_tool_call(body, tools)
    if parsed["name"] != name.strip():
        raise ValueError("not a GLM call")
    return [found(name, parsed["arguments"])]


def glm47_extract(answer: str, scan: Scan, tools: Tools) -> None:
    scan_blocks(answer, (Block(_CALL_OPEN, _CALL_CLOSE, partial(_glm, tools=tools)),), scan)


_GLM_NAME = re.compile(r"\s*([^\s<>{]+?)\s*(?:<arg_key>|</tool_call>|\n)")


def glm47_calling(answer: str) -> str | None:
    return last_started(answer, (_CALL_OPEN,), _GLM_NAME)


# --- kimi_k2 ------------------------------------------------------------------------------------

_KIMI_ITEM = ("<|tool_call_begin|>", "<|tool_call_end|>")
_KIMI_SECTION = ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>")


def _kimi(body: str) -> list[Found]:
    # mlx-lm accepts any JSON value (or even Python literal) as the arguments; a call needs an
    # object.
    parsed = kimi_k2.parse_tool_call(body)
    return [found(call["name"], call["arguments"], call.get("id")) for call in parsed]


_KIMI_CALL = Block(*_KIMI_ITEM, read=_kimi)
_KIMI_BLOCKS = (Block(*_KIMI_SECTION, items=_KIMI_CALL), _KIMI_CALL)


def kimi_k2_extract(answer: str, scan: Scan, tools: Tools) -> None:
    scan_blocks(answer, _KIMI_BLOCKS, scan)


_KIMI_NAME = re.compile(r"\s*(?:functions\.)?([^\s<]+?):\d+\s*<\|tool_call_argument_begin\|>")


def kimi_k2_calling(answer: str) -> str | None:
    if _KIMI_SECTION[0] in answer and _KIMI_ITEM[0] not in answer:
        return ""
    return last_started(answer, (_KIMI_ITEM[0],), _KIMI_NAME)
