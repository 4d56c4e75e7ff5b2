"""Kimi K3's channels ("XTML"): a reply is `<|open|>think<|sep|>…<|close|>think<|sep|>` (the
reasoning, split off by the dispatcher; the generation prompt opens it in thinking mode), then
`<|open|>response<|sep|>…<|close|>response<|sep|>` (the answer), then the calls:

    <|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|>
    <|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>
    <|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>

An argument's `type` says how to read it: "string" is the text as written, any other type is
JSON (a value that is not JSON stays text, as vLLM and SGLang keep it). Attributes escape `&`,
`"`, `<` and `>` as XML does; values are raw, so a value ends at the argument close the markup
continues from, and may quote the channels' own markers. The response wrappers are markup, not
answer; the servers also read them with blanks inside (`<|open|> response <|sep|>`).
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from inference.toolcalls.calls import Block, Found, Scan, Tools, found, scan_blocks

OPEN, CLOSE, SEP = "<|open|>", "<|close|>", "<|sep|>"
THINK = (f"{OPEN}think{SEP}", f"{CLOSE}think{SEP}")
ENDS = (f"{CLOSE}message{SEP}", "<|end_of_msg|>")
_TOOLS_OPEN, _TOOLS_CLOSE = f"{OPEN}tools{SEP}", f"{CLOSE}tools{SEP}"
_CALL_OPEN, _CALL_CLOSE = f"{OPEN}call", f"{CLOSE}call{SEP}"
_ARGUMENT_CLOSE = f"{CLOSE}argument{SEP}"
_CALL_HEAD = re.compile(r'\s+tool="([^"]*)"(?:\s+index="\d*")?\s*<\|sep\|>')
_ARGUMENT = re.compile(r'\s*<\|open\|>argument\s+key="([^"]*)"(?:\s+type="([^"]*)")?\s*<\|sep\|>')
_RESPONSE = re.compile(r"<\|(?:open|close)\|>\s*response\s*<\|sep\|>")


def _call(body: str) -> list[Found]:
    head = _CALL_HEAD.match(body)
    if head is None:
        raise ValueError("a call names its tool")
    arguments: dict[str, Any] = {}
    pos = head.end()
    while body[pos:].strip():
        argument = _ARGUMENT.match(body, pos)
        if argument is None:
            raise ValueError("stray text in the call")
        end = _value_end(body, argument.end())
        text = body[argument.end() : end]
        arguments[html.unescape(argument.group(1))] = _value(text, argument.group(2) or "string")
        pos = end + len(_ARGUMENT_CLOSE)
    return [found(html.unescape(head.group(1)), arguments)]


def _value_end(body: str, start: int) -> int:
    at = body.find(_ARGUMENT_CLOSE, start)
    while at >= 0:
        rest = body[at + len(_ARGUMENT_CLOSE) :]
        if not rest.strip() or _ARGUMENT.match(rest):
            return at
        at = body.find(_ARGUMENT_CLOSE, at + 1)
    raise ValueError("an argument was left open")


def _value(text: str, kind: str) -> Any:
    if kind == "string":
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


_BLOCKS = (
    Block(_TOOLS_OPEN, _TOOLS_CLOSE, items=(Block(_CALL_OPEN, _CALL_CLOSE, _call),)),
    Block(_CALL_OPEN, _CALL_CLOSE, _call),
)


def kimi_k3_extract(answer: str, scan: Scan, tools: Tools) -> None:
    # The response wrappers come before the calls; after them, only the calls' values could
    # hold such text, and those are the model's own.
    first = min((i for b in _BLOCKS if (i := answer.find(b.open)) >= 0), default=len(answer))
    scan_blocks(_RESPONSE.sub("", answer[:first]) + answer[first:], _BLOCKS, scan)


_NAME = re.compile(r'\s+tool="([^"]*)"')


def kimi_k3_calling(answer: str) -> str | None:
    at = answer.rfind(_CALL_OPEN)
    if at < 0:
        return "" if _TOOLS_OPEN in answer else None
    match = _NAME.match(answer, at + len(_CALL_OPEN))
    return html.unescape(match.group(1)) if match else ""
