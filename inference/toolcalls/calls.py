"""What a reply holds once read (`ParsedReply`, `ToolCall`), and the scanner every family shares.

A family's reader walks the answer text and, piece by piece, tells a `Scan` what it found: plain
text (the answer), a call it could read (`Found`), or the raw text of a call it could not read
(which stays in the answer, so the window shows it, and is listed as malformed). `scan_blocks`
does that walk for the families whose calls sit between an open and a close marker, optionally
grouped in a section (`<|tool_calls_section_begin|>…`).

Model output is untrusted: every reader of one call runs under a broad `except`, because the
parsers it uses (json, ast, mlx-lm's) raise many kinds of errors on bad text, and a bad call must
only ever make that one call malformed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

# The OpenAI-style tool schemas a model was given, when known.
Tools = Sequence[dict[str, Any]] | None
# Tool names: MCP allows [A-Za-z0-9_.-]; some templates add ":" or "/" (namespaces).
_NAME = re.compile(r"[\w.\-:/]{1,128}")
_ID_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
# Mistral's templates require ids of exactly 9 letters and digits; every other family takes them.
_ID_LENGTH = 9


@dataclass(frozen=True)
class ToolCall:
    """One call the model made. `id` is the model's own when it wrote one (Kimi K2, Mistral),
    otherwise derived from the reply's text and the call's place in it: the same reply always
    gets the same ids."""

    name: str
    arguments: dict[str, Any]
    id: str


@dataclass(frozen=True)
class ParsedReply:
    """A reply read: `content` is the answer without its calls (None when nothing is left),
    `reasoning` the thoughts, `tool_calls` the calls in the order written, and `malformed` the
    raw text of each call that could not be read (that text also stays in `content`)."""

    content: str | None
    reasoning: str | None
    tool_calls: list[ToolCall]
    malformed: list[str]


@dataclass(frozen=True)
class Found:
    """A call read from the text, before it gets its id."""

    name: str
    arguments: dict[str, Any]
    id: str | None = None


def found(name: Any, arguments: Any = None, call_id: Any = None) -> Found:
    """A checked call: a plausible tool name and a JSON object of arguments (a JSON string of one
    is decoded; none means no arguments). Raises ValueError otherwise."""
    if not isinstance(name, str) or not _NAME.fullmatch(name.strip()):
        raise ValueError(f"not a tool name: {name!r}")
    if arguments is None:
        arguments = {}
    elif isinstance(arguments, str):
        arguments = json.loads(arguments) if arguments.strip() else {}
    if not isinstance(arguments, dict):
        raise ValueError("arguments are not an object")
    usable_id = call_id if isinstance(call_id, str) and call_id.strip() else None
    return Found(name.strip(), arguments, usable_id)


def found_in_json(data: Any, argument_keys: Sequence[str] = ("arguments", "parameters")) -> Found:
    """A call from a decoded JSON object `{"name": …, "arguments": {…}}` (Llama writes the
    arguments under "parameters")."""
    if not isinstance(data, dict):
        raise ValueError("a call is a JSON object")
    arguments = next((data[key] for key in argument_keys if key in data), None)
    return found(data.get("name"), arguments, data.get("id"))


def json_prefix(text: str, start: int = 0) -> tuple[Any, int]:
    """The JSON value starting at `start` (after blanks) and where it ends."""
    while start < len(text) and text[start].isspace():
        start += 1
    return json.JSONDecoder().raw_decode(text, start)


@dataclass
class Scan:
    """What a reader found, in order."""

    content: list[str] = field(default_factory=list)
    calls: list[Found] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)

    def text(self, piece: str) -> None:
        self.content.append(piece)

    def call(self, call: Found) -> None:
        self.calls.append(call)

    def bad(self, raw: str) -> None:
        """A call that could not be read: its text stays in the answer and is listed."""
        self.content.append(raw)
        self.malformed.append(raw)

    def read(self, raw: str, reader: Callable[[str], list[Found]], body: str) -> None:
        """Read one call's `body` with `reader`; when it cannot, the call's text `raw` is
        malformed."""
        try:
            calls = reader(body)
        except Exception:  # untrusted text through json/ast/mlx-lm: any error means unreadable
            calls = []
        if not calls:
            self.bad(raw)
        for call in calls:
            self.call(call)


@dataclass(frozen=True)
class Block:
    """Markup between `open` and `close`. An item's body is read by `read` (a missing close
    means the call was cut short); a section's body holds `items` (a missing close is tolerated,
    its items each have their own)."""

    open: str
    close: str
    read: Callable[[str], list[Found]] | None = None
    items: Block | None = None


def scan_blocks(text: str, blocks: Sequence[Block], scan: Scan, inside: bool = False) -> None:
    """Walk `text`, giving each block's calls to `scan`; text between blocks is answer text, or,
    inside a section, part of a call that could not be read when it is not blank."""
    pos = 0
    while True:
        hits = [(i, b) for b in blocks if (i := text.find(b.open, pos)) >= 0]
        if not hits:
            break
        start, block = min(hits, key=lambda hit: hit[0])
        _between(text[pos:start], scan, inside)
        body = start + len(block.open)
        end = text.find(block.close, body)
        if block.items is not None:
            stop = len(text) if end < 0 else end
            scan_blocks(text[body:stop], (block.items,), scan, inside=True)
            pos = stop if end < 0 else end + len(block.close)
            continue
        reopen = text.find(block.open, body)
        if reopen >= 0 and (end < 0 or reopen < end):
            # A call opened again before this one closed: this one was cut short.
            scan.bad(text[start:reopen])
            pos = reopen
            continue
        if end < 0:
            scan.bad(text[start:])
            return
        assert block.read is not None, "an item block reads its body"
        scan.read(text[start : end + len(block.close)], block.read, text[body:end])
        pos = end + len(block.close)
    _between(text[pos:], scan, inside)


def last_started(text: str, opens: Sequence[str], name: re.Pattern[str]) -> str | None:
    """For a streaming reply: the name of the last call begun in `text` with one of `opens`, ""
    while its name is not complete yet, None when no call has begun."""
    start = max(text.rfind(marker) + len(marker) if marker in text else -1 for marker in opens)
    if start < 0:
        return None
    match = name.match(text, start)
    return match.group(1).strip() if match else ""


def _between(piece: str, scan: Scan, inside: bool) -> None:
    if not inside:
        scan.text(piece)
    elif piece.strip():
        scan.bad(piece)


def reply_of(text: str, scan: Scan) -> ParsedReply:
    """The finished reply; `text` (the whole reply) seeds the ids of calls that have none."""
    ids: list[str] = []
    for index, call in enumerate(scan.calls):
        call_id = call.id
        if call_id is None or call_id in ids:
            call_id = _derived_id(text, index)
        ids.append(call_id)
    return ParsedReply(
        content="".join(scan.content).strip() or None,
        reasoning="".join(scan.reasoning).strip() or None,
        tool_calls=[ToolCall(c.name, c.arguments, i) for c, i in zip(scan.calls, ids, strict=True)],
        malformed=[raw.strip() for raw in scan.malformed],
    )


def _derived_id(text: str, index: int) -> str:
    seed = f"{index}\x00{text}".encode("utf-8", "surrogatepass")
    number = int.from_bytes(hashlib.sha256(seed).digest())
    chars = []
    for _ in range(_ID_LENGTH):
        number, digit = divmod(number, len(_ID_ALPHABET))
        chars.append(_ID_ALPHABET[digit])
    return "".join(chars)
