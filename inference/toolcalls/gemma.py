"""Gemma 4's calls: `<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>`.

The arguments are not JSON: keys are bare, strings sit between `<|"|>` marks (no escapes inside),
numbers, booleans and null are bare, and objects and arrays nest the same way. The reader here
is a small recursive-descent one rather than mlx-lm's `gemma4` parser, which rewrites the text into
JSON with regular expressions and so rejects tool names with a dot (`call:tools.shell-exec{…}`,
common in MCP tool catalogs) and any blank after a comma (`{a:1, b:2}`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from inference.toolcalls.calls import Block, Found, Scan, Tools, found, last_started, scan_blocks

_OPEN, _CLOSE = "<|tool_call>", "<tool_call|>"
_QUOTE = '<|"|>'
_HEAD = re.compile(r"\s*call:([^\s{<]+)\s*(?=\{)")
_BARE_KEY = re.compile(r"[^:{}\[\],\s]+")
_SCALAR = re.compile(r"[^,}\]]+")
_TRAILING_DOT = re.compile(r"-?\d+\.")
_LITERALS = {"true": True, "false": False, "null": None, "None": None}


class _Arguments:
    """Reads one Gemma value at a time from `text`, moving `pos` past it."""

    def __init__(self, text: str, pos: int) -> None:
        self.text = text
        self.pos = pos

    def value(self) -> Any:
        self._blank()
        if self.text.startswith(_QUOTE, self.pos):
            return self._quoted()
        head = self.text[self.pos : self.pos + 1]
        if head == "{":
            return self.object()
        if head == "[":
            return self._array()
        if head == '"':
            value, self.pos = json.JSONDecoder().raw_decode(self.text, self.pos)
            return value
        match = _SCALAR.match(self.text, self.pos)
        if match is None or not match.group().strip():
            raise ValueError(f"no value at {self.pos}")
        self.pos = match.end()
        return _scalar(match.group().strip())

    def object(self) -> dict[str, Any]:
        self._expect("{")
        result: dict[str, Any] = {}
        if self._take("}"):
            return result
        while True:
            key = self._key()
            self._expect(":")
            result[key] = self.value()
            if not self._take(","):
                self._expect("}")
                return result

    def rest_is_blank(self) -> bool:
        return not self.text[self.pos :].strip()

    def _array(self) -> list[Any]:
        self._expect("[")
        items: list[Any] = []
        if self._take("]"):
            return items
        while True:
            items.append(self.value())
            if not self._take(","):
                self._expect("]")
                return items

    def _key(self) -> str:
        self._blank()
        if self.text.startswith(_QUOTE, self.pos) or self.text.startswith('"', self.pos):
            key = self.value()
            if not isinstance(key, str):
                raise ValueError("a key is text")
            return key
        match = _BARE_KEY.match(self.text, self.pos)
        if match is None:
            raise ValueError(f"no key at {self.pos}")
        self.pos = match.end()
        return match.group()

    def _quoted(self) -> str:
        start = self.pos + len(_QUOTE)
        end = self.text.find(_QUOTE, start)
        if end < 0:
            raise ValueError("a string was left open")
        self.pos = end + len(_QUOTE)
        return self.text[start:end]

    def _blank(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def _take(self, char: str) -> bool:
        self._blank()
        if self.text.startswith(char, self.pos):
            self.pos += len(char)
            return True
        return False

    def _expect(self, char: str) -> None:
        if not self._take(char):
            raise ValueError(f"expected {char!r} at {self.pos}")


def _scalar(text: str) -> Any:
    if text in _LITERALS:
        return _LITERALS[text]
    try:
        number = json.loads(text)
    except ValueError:
        # `108.` is a number to the model (and to vLLM's reader), not to JSON.
        return float(text) if _TRAILING_DOT.fullmatch(text) else text  # else a bare word
    return number if isinstance(number, int | float) else text


def _call(body: str) -> list[Found]:
    head = _HEAD.match(body)
    if head is None:
        raise ValueError("a Gemma call starts with call:NAME{")
    arguments = _Arguments(body, head.end())
    values = arguments.object()
    if not arguments.rest_is_blank():
        raise ValueError("text after the arguments")
    return [found(head.group(1), values)]


def gemma4_extract(answer: str, scan: Scan, tools: Tools) -> None:
    scan_blocks(answer, (Block(_OPEN, _CLOSE, _call),), scan)


_NAME = re.compile(r"\s*call:([^\s{<]+)\s*\{")


def gemma4_calling(answer: str) -> str | None:
    return last_started(answer, (_OPEN,), _NAME)
