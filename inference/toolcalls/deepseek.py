"""DeepSeek's calls (V3, R1, V3.1, V3.2, V4), which mlx-lm has no parser for.

- V3 and R1: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\\n
  ```json\\n{…}\\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>` (the type, then the name and a JSON
  code block).
- V3.1: the same markers, `<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{…}<｜tool▁call▁end｜>`.
- V3.2 and V4 (DSML): `<｜DSML｜function_calls>` (V4: `<｜DSML｜tool_calls>`) around
  `<｜DSML｜invoke name="get_weather">` blocks of `<｜DSML｜parameter name="city" string="true">
  Paris</｜DSML｜parameter>`; `string="false"` values are JSON.

All reason in `<think>…</think>`, split off first by the dispatcher (V3.1 and later open the block
in the generation prompt in thinking mode).
"""

from __future__ import annotations

import json
import re
from typing import Any

from inference.toolcalls.calls import Block, Found, Scan, Tools, found, json_prefix, scan_blocks

_SEP = "<｜tool▁sep｜>"
_V3_CODE = re.compile(r"\s*([^\s`]+)\s*```(?:json)?\s*(.*?)\s*```\s*", re.DOTALL)
_DSML = "｜DSML｜"
_INVOKE_NAME = re.compile(r'\s*name="([^"]*)"\s*>')
_PARAMETER = re.compile(
    rf'<{_DSML}parameter\s+name="([^"]*)"(?:\s+string="(true|false)")?\s*>(.*?)</{_DSML}parameter>',
    re.DOTALL,
)


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


def _invoke(body: str) -> list[Found]:
    head = _INVOKE_NAME.match(body)
    if head is None:
        raise ValueError("an invoke names its function")
    rest = body[head.end() :]
    if _PARAMETER.sub("", rest).strip():
        raise ValueError("stray or unclosed text in the call")
    arguments: dict[str, Any] = {}
    for name, is_string, value in _PARAMETER.findall(rest):
        arguments[name] = value if is_string != "false" else json.loads(value)
    return [found(head.group(1), arguments)]


_V3_CALL = Block("<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", _v3)
_INVOKE = Block(f"<{_DSML}invoke", f"</{_DSML}invoke>", _invoke)
_BLOCKS = (
    Block("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", items=_V3_CALL),
    Block(f"<{_DSML}function_calls>", f"</{_DSML}function_calls>", items=_INVOKE),
    Block(f"<{_DSML}tool_calls>", f"</{_DSML}tool_calls>", items=_INVOKE),
)


def deepseek_extract(answer: str, scan: Scan, tools: Tools) -> None:
    scan_blocks(answer, _BLOCKS, scan)


_V3_NAME = re.compile(r"\s*(?:function<｜tool▁sep｜>)?\s*([^\s<`]+?)\s*(?:\n|<｜tool▁sep｜>|```)")
_DSML_NAME = re.compile(r'\s*name="([^"]+)"')
_SECTIONS = tuple(block.open for block in _BLOCKS)


def deepseek_calling(answer: str) -> str | None:
    v3 = answer.rfind(_V3_CALL.open)
    dsml = answer.rfind(_INVOKE.open)
    if v3 < 0 and dsml < 0:
        return "" if any(section in answer for section in _SECTIONS) else None
    if v3 > dsml:
        match = _V3_NAME.match(answer, v3 + len(_V3_CALL.open))
    else:
        match = _DSML_NAME.match(answer, dsml + len(_INVOKE.open))
    return match.group(1) if match else ""
