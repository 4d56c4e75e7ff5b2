"""Mistral's calls, in both generations of its templates.

- v3 (Mistral 7B v0.3, Mixtral, Ministral-8B-2410): `[TOOL_CALLS] [{"name": "f", "arguments":
  {…}, "id": "abc123xyz"}, …]`, one JSON list for all calls.
- v11 and later (Mistral Small 3.2, Devstral, Magistral): `[TOOL_CALLS]f[ARGS]{…}`, the marker
  repeated before each call, sometimes with `[CALL_ID]abc123xyz` before `[ARGS]`.

There is no closing marker: a call's JSON ends it (a string in it may quote `[TOOL_CALLS]`); an
unreadable call runs to the next `[TOOL_CALLS]` or the end of the reply. A reply that stops right
after the marker called nothing, and the marker is no part of its text (vLLM drops it too).
Magistral reasons in `[THINK]…[/THINK]` (the dispatcher splits that off first).

mlx-lm's `mistral` parser reads both forms, but takes the call id after `[CALL_ID]` for the tool's
name and skips any text it does not recognise; so this reader walks the region itself and keeps
what follows the calls in the answer.
"""

from __future__ import annotations

import re
from typing import cast

from inference.toolcalls.calls import Found, Scan, Tools, found, found_in_json, json_prefix

MARKER = "[TOOL_CALLS]"
# Mistral's templates refuse to render an id that is not 9 letters and digits; others get new ids.
_ID = re.compile(r"[A-Za-z0-9]{9}")
# `[ARGS]` is a special token a decoder may leave out of the text (vLLM's v11 tests read
# `[TOOL_CALLS]add{"a": 1}`), so the arguments' brace may follow the name directly.
_HEADER = re.compile(
    r"\s*([^\s\[\]{}<>\"]+?)\s*(?:\[CALL_ID\]\s*([^\s\[\]]+)\s*)?(?:\[ARGS\]|(?=\{))"
)


def mistral_extract(answer: str, scan: Scan, tools: Tools) -> None:
    pos = 0
    while (at := answer.find(MARKER, pos)) >= 0:
        scan.text(answer[pos:at])
        pos = _region(answer, at, scan)
    scan.text(answer[pos:])


def _region(answer: str, at: int, scan: Scan) -> int:
    """Read the calls after the marker at `at`; returns where the text after them begins. The
    calls' JSON decides where they end: a string argument may quote `[TOOL_CALLS]` itself."""
    body = at + len(MARKER)
    if not answer[body:].strip():
        return len(answer)  # the reply stopped right after the marker: nothing was called
    if answer[body:].lstrip().startswith("["):
        try:
            items, end = json_prefix(answer, body)
            if not isinstance(items, list) or not items:
                raise ValueError("an empty call list")
            calls = [_with_usable_id(found_in_json(item)) for item in cast("list[object]", items)]
        except Exception:  # untrusted text: any error means the list cannot be read
            return _bad(answer, at, scan)
        for call in calls:
            scan.call(call)
        return end
    pos = body
    while (header := _HEADER.match(answer, pos)) is not None:
        try:
            arguments, end = json_prefix(answer, header.end())
            call = _with_usable_id(found(header.group(1), arguments, header.group(2)))
        except Exception:  # untrusted text: any error means this call cannot be read
            break
        scan.call(call)
        pos = end
    if pos == body:
        return _bad(answer, at, scan)
    stop = _next_marker(answer, pos)
    rest = answer[pos:stop]
    if rest.strip() and _HEADER.match(rest):
        scan.bad(rest)  # a second header left unreadable (cut short) is a malformed call
        return stop
    return pos  # other text after the calls is answer


def _bad(answer: str, at: int, scan: Scan) -> int:
    stop = _next_marker(answer, at + len(MARKER))
    scan.bad(answer[at:stop])
    return stop


def _next_marker(answer: str, pos: int) -> int:
    at = answer.find(MARKER, pos)
    return len(answer) if at < 0 else at


def _with_usable_id(call: Found) -> Found:
    if call.id is None or _ID.fullmatch(call.id):
        return call
    return Found(call.name, call.arguments)


_STARTED = re.compile(
    r'\s*(?:\[\s*\{\s*"name"\s*:\s*"([^"\\]+)"|([^\s\[\]{}<>"]+?)\s*\[(?:ARGS|CALL_ID)\])'
)


def mistral_calling(answer: str) -> str | None:
    at = answer.rfind(MARKER)
    if at < 0:
        return None
    match = _STARTED.match(answer, at + len(MARKER))
    return (match.group(1) or match.group(2)) if match else ""
