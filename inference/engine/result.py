"""What a generate call gives back: the reply's text and token ids, why it ended, and its counts
and speeds, in plain Python values (never MLX arrays), safe to hand to any thread."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

# "context": the reply filled the model's context before it ended (never a silent "length");
# "tool_calls": the reply ended having called tools (only when the request offered some).
FinishReason = Literal["stop", "length", "cancelled", "context", "tool_calls"]


@dataclass(frozen=True)
class GenerationStats:
    """Counts and speeds of one request; `cached_tokens + prefill_tokens == prompt_tokens`.

    `cached_tokens` were reused from stored caches, `disk_tokens` of them read from saved files
    for this request. `prefill_tokens` counts the prompt tokens this request had to compute (for
    a request cancelled during prefill, the ones it set out to compute). `ttft_s` is the time
    from the call to the first generated token; `prefill_tps` the prompt tokens computed per
    second before it; `decode_tps` the generated tokens per second after it. With speculative
    decoding, `drafted_tokens` were guessed ahead and checked, and the model agreed with
    `accepted_tokens` of them.
    """

    prompt_tokens: int
    cached_tokens: int
    prefill_tokens: int
    generated_tokens: int
    ttft_s: float
    prefill_tps: float
    decode_tps: float
    disk_tokens: int = 0
    drafted_tokens: int = 0
    accepted_tokens: int = 0


@dataclass(frozen=True)
class GenerationResult:
    """A reply in plain Python values (never MLX arrays), safe to hand to any thread.

    `token_ids` are the generated ids, including the end-of-sequence id when the model ended
    the reply; `text` is their decoded text without it, cut before a stop string.
    `dropped_messages` are the indexes (into the messages given) of those the overflow policy
    left out of the prompt.

    When the request offered tools, the reply is read in the model's tool-call format:
    `tool_calls` are the calls it made, in order, as `{"id", "name", "arguments": dict}`, and
    `content` is its answer without the calls' markup and without its reasoning ("" when
    nothing else is left; a call that could not be read stays in it as text). Without tools,
    `tool_calls` is empty and `content` None: `text` is the reply.
    """

    text: str
    token_ids: tuple[int, ...]
    finish_reason: FinishReason
    stats: GenerationStats
    dropped_messages: tuple[int, ...] = ()
    tool_calls: tuple[dict[str, Any], ...] = ()
    content: str | None = None
