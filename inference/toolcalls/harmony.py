"""gpt-oss's harmony format, which mlx-lm has no parser for.

A reply is a run of messages, each a header and a body: `<|channel|>analysis<|message|>…<|end|>`
(reasoning), `<|start|>assistant<|channel|>final<|message|>…<|return|>` (the answer), and
commentary. A call is a message addressed to a function, the recipient written in the channel
part or in the role part of the header:
`<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>
{"city":"Tokyo"}<|call|>` or `<|start|>assistant to=functions.get_weather<|channel|>commentary
json<|message|>{…}<|call|>`. The generation prompt ends with `<|start|>assistant`, so the first
header has no role. `<|call|>` and `<|return|>` stop generation and may be missing from the text;
a call's body then runs to the end and counts when its JSON is whole.

The reasoning is read here from the channels, not with `inference.prompt.reasoning`'s splitter,
which drops the headers that carry the recipient.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from inference.toolcalls.calls import Found, Scan, Tools, found, json_prefix

_START, _CHANNEL, _MESSAGE = "<|start|>", "<|channel|>", "<|message|>"
_ENDS = ("<|end|>", "<|call|>", "<|return|>", _START)
_RECIPIENT = re.compile(r"to=([^\s<]+)")
_CHANNEL_NAME = re.compile(r"<\|channel\|>\s*([^\s<]+)")
_FUNCTIONS = "functions."


def harmony_extract(text: str, scan: Scan, tools: Tools) -> None:
    if _MESSAGE not in text and _CHANNEL not in text:
        scan.text(text)
        return
    for header, body, raw in _messages(text):
        prefix, start, header = header.rpartition(_START)
        cut = header.find(_CHANNEL)
        if not start and cut > 0 and "to=" not in header[:cut]:
            # Text before the first header is answer text; a bare role there is markup.
            prefix, header = header[:cut], header[cut:]
            prefix = "" if prefix.strip() == "assistant" else prefix
        scan.text(prefix)
        recipient = _RECIPIENT.search(header)
        channel = _CHANNEL_NAME.search(header)
        if recipient is not None:
            if body is None:
                scan.bad(raw)  # cut short inside the header
            else:
                scan.read(raw, _reader(recipient.group(1)), body)
        elif body is None:
            continue  # a bare header (`<|start|>assistant`) holds nothing to show
        elif channel is None:
            _part(scan.content, header + body)  # text that only looks like a message
        elif channel.group(1) == "analysis":
            _part(scan.reasoning, body)
        else:  # final, or commentary shown to the person (a preamble before calls)
            _part(scan.content, body)


def _reader(recipient: str):
    name = recipient.removeprefix(_FUNCTIONS)

    def read(body: str) -> list[Found]:
        return [found(name, body)]

    return read


def _part(parts: list[str], text: str) -> None:
    if parts and text.strip():
        parts.append("\n\n")
    parts.append(text)


def _messages(text: str) -> Iterator[tuple[str, str | None, str]]:
    """(header, body, raw text) per message; the body is None when the text ends in a header."""
    pos = 0
    while pos < len(text):
        at = text.find(_MESSAGE, pos)
        if at < 0:
            yield text[pos:], None, text[pos:]
            return
        start = at + len(_MESSAGE)
        end, marker = _body_end(text, start, "to=" in text[pos:at])
        after = end if marker in ("", _START) else end + len(marker)
        yield text[pos:at], text[start:end], text[pos:after]
        pos = after


def _body_end(text: str, start: int, is_call: bool) -> tuple[int, str]:
    """Where a message's body ends, and the marker that ends it ("" at the end of the text). A
    call's JSON arguments end where the JSON does, since a string in them may quote `<|call|>`."""
    if is_call:
        try:
            _, end = json_prefix(text, start)
        except ValueError:
            pass  # not whole JSON: the first end marker ends it, and the call is malformed
        else:
            after = len(text) - len(text[end:].lstrip())
            if after == len(text):
                return after, ""
            marker = next((m for m in _ENDS if text.startswith(m, after)), None)
            if marker is not None:
                return after, marker
    ends = [(i, marker) for marker in _ENDS if (i := text.find(marker, start)) >= 0]
    return min(ends) if ends else (len(text), "")


_CALLING = re.compile(r"to=(?:functions\.)?([^\s<]+)(?=[\s<])")


def harmony_calling(text: str) -> str | None:
    called = None
    for header, body, _ in _messages(text):
        if "to=" in header:
            # A whole header ends the name; one still streaming may stop mid-name.
            match = _CALLING.search(header if body is None else header + " ")
            called = match.group(1) if match else ""
    return called
