"""What a streaming reply may show while it writes a tool call: never the call's markup.

A marker arrives over several tokens (`<`, then `｜DSML｜`, then ` calls>`), so besides hiding
everything from a complete marker on, the trailing piece that could still become one is held
back until the next tokens say what it is. Only pieces that begin with punctuation are held:
no marker starts with a letter that ordinary prose ends on.
"""

from __future__ import annotations

from functools import cache

from inference.toolcalls.formats import TOOL_FORMATS


@cache
def _spellings(tool_format: str) -> tuple[str, ...]:
    """The format's markers as replies write them (DeepSeek's DSML marker follows a `<`)."""
    markers = TOOL_FORMATS[tool_format].markers
    return tuple({*markers, *(f"<{m}" for m in markers if not m.startswith("<"))})


def hidden_tail(answer: str, tool_format: str) -> int:
    """How many trailing characters of a streaming answer to keep out of sight: from where a
    call's markup begins to the end, or a trailing piece that may be the start of a marker."""
    form = TOOL_FORMATS[tool_format]
    spellings = _spellings(tool_format)
    starts = [at for marker in spellings if (at := answer.find(marker)) >= 0]
    if starts:
        return len(answer) - min(starts)
    if form.bare and answer.lstrip().startswith(form.bare):
        return len(answer)  # the whole reply is the call (a JSON call, Llama's bare form)
    return max(
        (
            length
            for marker in spellings
            for length in range(1, len(marker))
            if not marker[0].isalnum() and answer.endswith(marker[:length])
        ),
        default=0,
    )
