"""Mistral's calls, in both generations of its templates.

- v3 (Mistral 7B v0.3, Mixtral, Ministral-8B-2410): `[TOOL_CALLS] [{"name": "f", "arguments":
  {…}, "id": "abc123xyz"}, …]`, one JSON list for all calls.
- v11 and later (Mistral Small 3.2, Devstral, Magistral): `[TOOL_CALLS]f[ARGS]{…}`, the marker
  repeated before each call, sometimes with `[CALL_ID]abc123xyz` before `[ARGS]`.

There is no closing marker: a call runs to the next `[TOOL_CALLS]` or the end of the reply.
Magistral reasons in `[THINK]…[/THINK]` (the dispatcher splits that off first).

mlx-lm's `mistral` parser reads both forms, but takes the call id after `[CALL_ID]` for the tool's
name and skips any text it does not recognise; so this reader walks the region itself and keeps
what follows the calls in the answer.
"""

from __future__ import annotations

import re

from inference.toolcalls.calls import Found, Scan, Tools, found, found_in_json, json_prefix

MARKER = "[TOOL_CALLS]"
# Mistral's templates refuse to render an id that is not 9 letters and digits; others get new ids.
_ID = re.compile(r"[A-Za-z0-9]{9}")
_HEADER = re.compile(r"\s*([^\s\[\]{}<>\"]+?)\s*(?:\[CALL_ID\]\s*([^\s\[\]]+)\s*)?\[ARGS\]")


def mistral_extract(answer: str, scan: Scan, tools: Tools) -> None:
    before, *regions = answer.split(MARKER)
    scan.text(before)
    for region in regions:
        _region(region, scan)


def _region(region: str, scan: Scan) -> None:
    if region.lstrip().startswith("["):
        try:
            items, end = json_prefix(region)
            if not isinstance(items, list) or not items:
                raise ValueError("an empty call list")
            calls = [_with_usable_id(found_in_json(item)) for item in items]
        except Exception:  # untrusted text: any error means the list cannot be read
            scan.bad(MARKER + region)
            return
        for call in calls:
            scan.call(call)
        scan.text(region[end:])
        return
    pos = 0
    while (header := _HEADER.match(region, pos)) is not None:
        try:
            arguments, end = json_prefix(region, header.end())
            call = _with_usable_id(found(header.group(1), arguments, header.group(2)))
        except Exception:  # untrusted text: any error means this call cannot be read
            break
        scan.call(call)
        pos = end
    if pos == 0:
        scan.bad(MARKER + region)
    elif region[pos:].strip():
        rest = region[pos:]
        # A second header left unreadable (cut short) is a malformed call; other text is answer.
        (scan.bad if _HEADER.match(rest) else scan.text)(rest)


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
