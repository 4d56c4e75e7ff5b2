"""JSON read as a stream, safely: one array element at a time (ijson), through a filter that
repairs text and refuses what would exhaust memory.

The filter (`GuardedBytes`) sits between the file and the parser and works on whole chunks at C
speed: it turns UTF-8-encoded surrogate pairs (CESU-8, seen in real exports) into the real
character and other invalid bytes into U+FFFD; it turns a lone `\\uD83D` escape into `\\uFFFD`
(the C parser would write "?"); and it refuses nesting deeper than `MAX_DEPTH`, which ijson
would otherwise pay for quadratically in memory, and more than `max_bytes` in all.
"""

from __future__ import annotations

import codecs
import io
import re
from collections.abc import Iterator
from itertools import accumulate
from typing import TYPE_CHECKING, Any, cast

import ijson

from app.importers.errors import ImportRefusedError

if TYPE_CHECKING:
    from _typeshed import SupportsRead

MAX_DEPTH = 64
CHUNK = 256 * 1024
_ESCAPE = re.compile(
    rb"(?<!\\)((?:\\\\)*)(\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    rb"|\\u[dD][89a-fA-F][0-9a-fA-F]{2})"
)
_TAIL_ESCAPE = re.compile(rb"\\u[0-9a-fA-F]{4}$")
_STRING = re.compile(rb'"[^"]*"')
_BRACKETS = bytes.maketrans(b"[{]}", b"\x01\x01\x02\x02")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[{]}")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[{]}')
_STEP = (0, 1, -1)


def _repair_bytes(error: UnicodeError) -> tuple[str, int]:
    """Decode errors: a CESU-8 surrogate kept (the pair is joined later), anything else U+FFFD."""
    assert isinstance(error, UnicodeDecodeError)
    try:
        replacement, end = codecs.lookup_error("surrogatepass")(error)
    except UnicodeDecodeError:
        return "\ufffd", error.start + 1
    assert isinstance(replacement, str)  # a decode error's handler gives text
    return replacement, end


codecs.register_error("branchwise-import-repair", _repair_bytes)


def _lone_escape(match: re.Match[bytes]) -> bytes:
    pair = match.group(2)
    return match.group(0) if len(pair) == 12 else match.group(1) + rb"\ufffd"


class GuardedBytes(io.RawIOBase):
    """A readable byte stream over `raw`: repaired text, nesting and size limits (see module)."""

    def __init__(self, raw: SupportsRead[bytes], max_bytes: int, where: str) -> None:
        super().__init__()
        self._raw = raw
        self._max = max_bytes
        self._where = where
        self._total = 0
        self._carry = b""
        self._decoder = codecs.getincrementaldecoder("utf-8")("branchwise-import-repair")
        self._in_string = False
        self._depth = 0
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson asks for nothing first, to learn whether the stream gives bytes
            return b""
        while not self._done:
            chunk = self._raw.read(CHUNK)
            self._total += len(chunk)
            if self._total > self._max:
                raise ImportRefusedError(
                    f"{self._where} is larger than the import limit ({self._max:,} bytes)."
                )
            out = self._filter(chunk, final=not chunk)
            if out:
                return out
        return b""

    def _filter(self, chunk: bytes, final: bool) -> bytes:
        try:
            text = chunk.decode("utf-8") if not final and not self._decoder.getstate()[0] else None
        except UnicodeDecodeError:
            text = None
        if text is None:
            text = self._decoder.decode(chunk, final)
        data = self._carry + _join_surrogates(text).encode("utf-8")
        if final:
            self._done = True
            self._carry = b""
        else:
            cut = _safe_cut(data)
            data, self._carry = data[:cut], data[cut:]
        if b"\\u" in data:
            data = _ESCAPE.sub(_lone_escape, data)
        self._check_depth(data)
        return data

    def _check_depth(self, data: bytes) -> None:
        # Only quotes and brackets matter: drop escaped backslashes, then escaped quotes, then
        # everything else (all at C speed; `data` never ends inside a run of backslashes).
        if b"\\" in data:
            data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
        structure = data.translate(None, _NOT_STRUCTURE)
        if self._in_string:
            end = structure.find(b'"')
            if end < 0:
                return
            structure, self._in_string = structure[end + 1 :], False
        outside = _STRING.sub(b"", structure)
        quote = outside.find(b'"')
        if quote >= 0:
            outside, self._in_string = outside[:quote], True
        brackets = outside.translate(_BRACKETS, _NOT_BRACKETS)
        if not brackets:
            return
        levels = list(accumulate(map(_STEP.__getitem__, brackets), initial=self._depth))
        if max(levels) > MAX_DEPTH:
            raise ImportRefusedError(
                f"{self._where} nests deeper than {MAX_DEPTH} levels; no chat export does that."
            )
        self._depth = levels[-1]


def _join_surrogates(text: str) -> str:
    """Surrogate pairs decoded separately become one character; a lone one becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _safe_cut(data: bytes) -> int:
    """Where to split `data` so no escape (or pair of escapes) and no run of backslashes is cut:
    what follows the cut waits for the next chunk."""
    cut = len(data)
    window = data.find(b"\\", max(0, cut - 12))
    if window >= 0:
        cut = window
    while True:
        while cut > 0 and data[cut - 1 : cut] == b"\\":
            cut -= 1
        if _TAIL_ESCAPE.search(data, max(0, cut - 6), cut) and cut >= 6:
            cut -= 6
            continue
        return cut


def items(
    raw: SupportsRead[bytes], max_bytes: int, where: str, prefix: str = "item"
) -> Iterator[Any]:
    """The elements of a top-level JSON array (or those at ijson's `prefix`), one at a time; a
    file that breaks off raises ImportRefusedError at the element where it goes wrong."""
    stream = GuardedBytes(raw, max_bytes, where)
    try:
        yield from ijson.items(stream, prefix, use_float=True)
    except ijson.JSONError as exc:
        raise ImportRefusedError(f"{where} is not valid JSON ({_first_line(exc)}).") from None


def head(raw: SupportsRead[bytes], max_bytes: int, where: str, stop: str) -> dict[str, Any]:
    """The members of a top-level JSON object that come before its member `stop` (an
    archive's head, ahead of its conversations), read without reading on past it."""
    stream = GuardedBytes(raw, max_bytes, where)
    builder = ijson.ObjectBuilder()
    try:
        for prefix, event, value in ijson.parse(stream, use_float=True):
            if prefix == "" and event == "map_key" and value == stop:
                break
            builder.event(event, value)
    except ijson.JSONError as exc:
        raise ImportRefusedError(f"{where} is not valid JSON ({_first_line(exc)}).") from None
    found = getattr(builder, "value", None)
    return cast("dict[str, Any]", found) if isinstance(found, dict) else {}


def load(raw: SupportsRead[bytes], max_bytes: int, where: str) -> Any:
    """One whole JSON document (small files: a manifest, a thread, one chat)."""
    stream = GuardedBytes(raw, max_bytes, where)
    try:
        for value in ijson.items(stream, "", use_float=True):
            return value
    except ijson.JSONError as exc:
        raise ImportRefusedError(f"{where} is not valid JSON ({_first_line(exc)}).") from None
    raise ImportRefusedError(f"{where} is empty.")


def loads(data: bytes, where: str) -> Any:
    """One JSON value from bytes (a line of a .jsonl file)."""
    return load(io.BytesIO(data), len(data) + 1, where)


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or ["parse error"])[0]
