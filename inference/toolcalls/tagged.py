"""The JSON families whose calls sit between tags: Hermes/Qwen and Kimi K2 (Qwen3-Coder's XML is
in `qwen_xml`, GLM's in `glm`).

- hermes (Qwen2.5, Qwen3, Hermes 2 Pro/3): `<tool_call>\\n{"name": "f", "arguments": {…}}\\n
  </tool_call>`, one block per call.
- kimi_k2: `<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0
  <|tool_call_argument_begin|>{…}<|tool_call_end|>…<|tool_calls_section_end|>`; the
  `functions.f:0` id is kept, since Kimi's template writes it back into the history.

Both are JSON, read whole (not with mlx-lm's readers, which search a body for JSON). Where a call
ends is the scanner's business (`calls.scan_blocks`): JSON strings may hold the closing markers.
"""

from __future__ import annotations

import json
import re
from functools import partial

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
from inference.toolcalls.qwen_xml import qwen3_coder_call

# --- hermes -------------------------------------------------------------------------------------


def _hermes(body: str, tools: Tools) -> list[Found]:
    if body.lstrip().startswith("<function="):  # Qwen3-Coder's XML from a Qwen JSON template
        return qwen3_coder_call(body, tools)
    return json_calls(body)


def hermes_extract(answer: str, scan: Scan, tools: Tools) -> None:
    reader = partial(_hermes, tools=tools)
    scan_blocks(answer, (Block(CALL_OPEN, CALL_CLOSE, reader, ends_at_eof=True),), scan)


_HERMES_NAME = re.compile(r'\s*\{\s*"name"\s*:\s*"([^"\\]+)"')


def hermes_calling(answer: str) -> str | None:
    return last_started(answer, (CALL_OPEN,), _HERMES_NAME)


# --- kimi_k2 ------------------------------------------------------------------------------------

_KIMI_ITEM = ("<|tool_call_begin|>", "<|tool_call_end|>")
_KIMI_SECTION = ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>")


_KIMI_HEAD = re.compile(r"\s*((?:functions\.)?([^\s<:]+):\d+)\s*<\|tool_call_argument_begin\|>")


def _kimi(body: str) -> list[Found]:
    # Not mlx-lm's reader: it searches the body for a call, so a body holding two (the first
    # broken) reads as the second, and it takes any JSON value (or Python literal) for the
    # arguments. Here the body is one id and one JSON object, whole.
    head = _KIMI_HEAD.match(body)
    if head is None:
        raise ValueError("a Kimi call starts with functions.NAME:INDEX")
    return [found(head.group(2), json.loads(body[head.end() :]), head.group(1))]


_KIMI_CALL = Block(*_KIMI_ITEM, read=_kimi)
_KIMI_BLOCKS = (Block(*_KIMI_SECTION, items=(_KIMI_CALL,)), _KIMI_CALL)


def kimi_k2_extract(answer: str, scan: Scan, tools: Tools) -> None:
    scan_blocks(answer, _KIMI_BLOCKS, scan)


_KIMI_NAME = re.compile(r"\s*(?:functions\.)?([^\s<]+?):\d+\s*<\|tool_call_argument_begin\|>")


def kimi_k2_calling(answer: str) -> str | None:
    if _KIMI_SECTION[0] in answer and _KIMI_ITEM[0] not in answer:
        return ""
    return last_started(answer, (_KIMI_ITEM[0],), _KIMI_NAME)
