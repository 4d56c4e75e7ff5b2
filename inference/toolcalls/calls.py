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
from typing import Any, cast

# The OpenAI-style tool schemas a model was given, when known.
Tools = Sequence[dict[str, Any]] | None
# What may stand between JSON calls written one after another.
_JSON_SEPARATORS = " \t\r\n,;"
# The tags around a call in the Hermes/Qwen, Qwen3-Coder and GLM families.
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
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
    checked = json_object(arguments)
    if checked is None:
        raise ValueError("arguments are not an object")
    usable_id = call_id if isinstance(call_id, str) and call_id.strip() else None
    return Found(name.strip(), checked, usable_id)


def found_in_json(data: Any, argument_keys: Sequence[str] = ("arguments", "parameters")) -> Found:
    """A call from a decoded JSON object `{"name": …, "arguments": {…}}` (Llama writes the
    arguments under "parameters")."""
    call = json_object(data)
    if call is None:
        raise ValueError("a call is a JSON object")
    arguments = next((call[key] for key in argument_keys if key in call), None)
    return found(call.get("name"), arguments, call.get("id"))


def json_object(value: object) -> dict[str, Any] | None:
    """`value` when it is a decoded JSON object (whose keys are text), else None."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def json_calls(body: str) -> list[Found]:
    """The calls of one `<tool_call>` block of JSON (Hermes and Qwen; GLM and Qwen3-Coder
    replies write some too): one object, a list of them, or objects one after another
    (`{…}, {…}`, which SGLang reads)."""
    items: list[Any] = []
    pos = 0
    while body[pos:].strip(_JSON_SEPARATORS):
        data, pos = json_prefix(body, pos)
        items += data if isinstance(data, list) else [data]
        pos = len(body) - len(body[pos:].lstrip(_JSON_SEPARATORS))
    return [found_in_json(item) for item in items]


def json_prefix(text: str, start: int = 0) -> tuple[Any, int]:
    """The JSON value starting at `start` (after blanks) and where it ends."""
    while start < len(text) and text[start].isspace():
        start += 1
    return json.JSONDecoder().raw_decode(text, start)


@dataclass
class Scan:
    """What a reader found, in order."""

    content: list[str] = field(default_factory=list[str])
    calls: list[Found] = field(default_factory=list[Found])
    malformed: list[str] = field(default_factory=list[str])
    reasoning: list[str] = field(default_factory=list[str])

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
    """Markup between `open` and `close` (or one of `also`, other endings the family writes, like
    DSML's self-closing invoke `/>`, handed to `read` at the end of the body it ends, so the
    reader can tell a self-closed item from a value that holds the ending). An item's body is
    read by `read` (a missing close means the
    call was cut short); a section's body holds `items` (a missing close is tolerated, its items
    each have their own). `trail`: a marker that may follow an item and belongs to it (a
    Qwen3-Coder `</tool_call>` after a `<function=…>` written without its opener). `lenient`
    reads a body the way servers accept from real models (a last value's close left out); it is
    tried only when no close reads strictly, so a value quoting the close is not cut short.
    `ends_at_eof`: the text's end closes an item whose body is whole JSON (the model wrote the
    call and stopped before its close, a stop token the decoder dropped; vLLM reads it). For
    markup bodies the end proves nothing (more parameters could have followed), so they stay
    cut short."""

    open: str
    close: str
    read: Callable[[str], list[Found]] | None = None
    lenient: Callable[[str], list[Found]] | None = None
    items: tuple[Block, ...] = ()
    also: tuple[str, ...] = ()
    trail: str = ""
    ends_at_eof: bool = False


# A call whose close never reads is given up after this many later closes: each try reads the
# body again, and a long reply of broken calls should not cost quadratic time.
_MOST_ENDS = 64


def scan_blocks(text: str, blocks: Sequence[Block], scan: Scan) -> None:
    """Walk `text`, giving each block's calls to `scan`; text between blocks is answer text."""
    pos = 0
    while (hit := _next_open(text, pos, blocks)) is not None:
        start, block = hit
        scan.text(text[pos:start])
        pos = _section(text, start, block, scan) if block.items else _item(text, start, block, scan)
    scan.text(text[pos:])


def _next_open(text: str, pos: int, blocks: Sequence[Block]) -> tuple[int, Block] | None:
    hits = [(i, n, b) for n, b in enumerate(blocks) if (i := text.find(b.open, pos)) >= 0]
    if not hits:
        return None
    start, _, block = min(hits, key=lambda hit: hit[:2])
    return start, block


def _item(text: str, start: int, block: Block, scan: Scan) -> int:
    """Read the item opened at `start`; returns where the text after it begins.

    A call ends at the first of its closes after which its body reads: a string argument may
    hold the family's own markers (a file documenting `<tool_call>` tags), so the first close
    is not always the call's. Only when no close reads is the call malformed, up to where it
    was cut short: a new opener before any close, the first close, or the end of the text."""
    assert block.read is not None, "an item block reads its body"
    body = start + len(block.open)
    ends = _ends(text, body, (block.close, *block.also))[:_MOST_ENDS]
    at_eof = [(len(text), "")] if block.ends_at_eof else []
    tries = [(block.read, [*ends, *at_eof]), (block.lenient, ends)]
    for read, candidates in tries:
        if read is None:
            continue
        for end, marker in candidates:
            kept = marker if marker in block.also else ""
            try:
                calls = read(text[body:end] + kept)
            except Exception:  # untrusted text through json/ast/mlx-lm: any error: unreadable
                continue
            if calls:
                for call in calls:
                    scan.call(call)
                return _after(text, end + len(marker), block.trail)
    reopen = text.find(block.open, body)
    cut, marker = ends[0] if ends else (len(text), "")
    stop = reopen if 0 <= reopen < cut else cut + len(marker)
    scan.bad(text[start:stop])
    return stop


def _after(text: str, pos: int, trail: str) -> int:
    if not trail:
        return pos
    rest = len(text) - len(text[pos:].lstrip())
    return rest + len(trail) if text.startswith(trail, rest) else pos


def _ends(text: str, body: int, closes: Sequence[str]) -> list[tuple[int, str]]:
    ends: list[tuple[int, str]] = []
    for close in closes:
        at = text.find(close, body)
        while at >= 0:
            ends.append((at, close))
            at = text.find(close, at + 1)
    return sorted(ends)


def _section(text: str, start: int, block: Block, scan: Scan) -> int:
    """Walk the items of the section opened at `start`; text in it that is not an item and not
    blank is part of a call that could not be read. Its close is looked for between items only,
    since an item's argument may hold it."""
    pos = start + len(block.open)
    while True:
        close = text.find(block.close, pos)
        hit = _next_open(text, pos, block.items)
        if hit is None or 0 <= close < hit[0]:
            stop = len(text) if close < 0 else close
            if text[pos:stop].strip():
                scan.bad(text[pos:stop])
            return stop if close < 0 else close + len(block.close)
        at, item = hit
        if text[pos:at].strip():
            scan.bad(text[pos:at])
        pos = _item(text, at, item, scan)


def last_started(text: str, opens: Sequence[str], name: re.Pattern[str]) -> str | None:
    """For a streaming reply: the name of the last call begun in `text` with one of `opens`, ""
    while its name is not complete yet, None when no call has begun."""
    start = max(text.rfind(marker) + len(marker) if marker in text else -1 for marker in opens)
    if start < 0:
        return None
    match = name.match(text, start)
    return match.group(1).strip() if match else ""


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
    chars: list[str] = []
    for _ in range(_ID_LENGTH):
        number, digit = divmod(number, len(_ID_ALPHABET))
        chars.append(_ID_ALPHABET[digit])
    return "".join(chars)
