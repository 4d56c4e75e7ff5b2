"""What a tool call gives back, as plain text the model and the window can take.

Tool results are untrusted: MCP content blocks become plain text (text blocks as they are,
minus control characters; images, audio and links described, never fetched or decoded), and a
result longer than the cap keeps its head and tail around a marker saying how much was cut, so
one huge answer cannot push the conversation out of the model's context.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from app.sizes import format_size

MAX_RESULT_CHARS = 16_000
# A token is about four characters of English text: enough to size a cap, which needs no
# tokenizer (the model may not even be loaded).
CHARS_PER_TOKEN = 4
HEAD_SHARE = 0.75  # of what is kept; the head usually says what the result is
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class ToolFailure(StrEnum):
    """Why a call gave no usable result; the model is told so in the result text. A StrEnum:
    a stored result's stats keep the value as its "failure"."""

    TOOL = "tool_error"  # the tool ran and reported an error
    BAD_ARGUMENTS = "bad_arguments"
    TIMEOUT = "timeout"
    SERVER = "server_error"  # not running, crashed, or broke the protocol
    CANCELLED = "cancelled"
    DENIED = "denied"  # the person refused to run it


@dataclass(frozen=True)
class ToolResult:
    text: str
    failure: ToolFailure | None = None
    duration_s: float = 0.0

    @property
    def is_error(self) -> bool:
        return self.failure is not None

    @property
    def reason(self) -> str:
        """The first line of the text, for one-line reports."""
        return (self.text.strip().splitlines() or [""])[0]


def result_cap(context_tokens: int | None) -> int:
    """The most characters of one result the model sees: the smaller of 16k characters and a
    quarter of the context (estimated in characters)."""
    if not context_tokens or context_tokens <= 0:
        return MAX_RESULT_CHARS
    return max(1, min(MAX_RESULT_CHARS, context_tokens * CHARS_PER_TOKEN // 4))


def cap_text(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else its head and tail with a marker in between
    saying how many characters were cut; the whole never exceeds `limit`."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    while True:  # the marker's length depends on the number it gives; two rounds at most
        marker = f"\n[… {cut:,} characters cut …]\n"
        room = limit - len(marker)
        if room <= 0:
            return text[:limit]  # a cap too small for a marker: just the head
        if len(text) - room == cut:
            break
        cut = len(text) - room
    head = int(room * HEAD_SHARE)
    tail = room - head
    return text[:head] + marker + (text[len(text) - tail :] if tail else "")


def capped_result(result: ToolResult, context_tokens: int | None) -> ToolResult:
    capped = cap_text(result.text, result_cap(context_tokens))
    return result if capped is result.text else replace(result, text=capped)


def clean_text(text: str) -> str:
    """Text from a tool with control characters (other than tab and newline) removed."""
    return _CONTROL.sub("", text.replace("\r\n", "\n"))


def content_text(blocks: Iterable[Any], structured: Any = None) -> str:
    """MCP content blocks as plain text; the structured content (JSON) when there is no block."""
    parts = [_block_text(block) for block in blocks]
    parts = [p for p in parts if p]
    if not parts and structured is not None:
        parts = [json.dumps(structured, ensure_ascii=False, indent=1)]
    return clean_text("\n\n".join(parts))


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        mime = getattr(block, "mime_type", "") or "unknown type"
        data = getattr(block, "data", "") or ""
        return f"[{kind}: {mime}, {format_size(len(data) * 3 // 4)}; not shown to the model]"
    if kind == "resource_link":
        name = getattr(block, "name", "") or "a resource"
        mime = getattr(block, "mime_type", None)
        kind_note = f" ({mime})" if mime else ""
        return f"[link to {name}: {getattr(block, 'uri', '')}{kind_note}]"
    if kind == "resource":
        return _embedded(getattr(block, "resource", None))
    return f"[{kind or 'unknown'} content, not shown]"


def _embedded(resource: Any) -> str:
    uri = getattr(resource, "uri", "")
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        return f"[resource {uri}]\n{text}"
    blob = getattr(resource, "blob", "") or ""
    mime = getattr(resource, "mime_type", None) or "binary"
    return f"[resource {uri}: {mime}, {format_size(len(blob) * 3 // 4)}; not shown to the model]"
