"""How many prompt tokens the next prefill chunk should take.

A cancel is only seen between chunks, so a chunk must be short in time on every machine: a fixed
512 tokens is a fraction of a second on a fast GPU and over ten seconds on a slow CPU. The pacer
measures how long the chunks it sized actually took and sizes the next one to take about
`target_s`, between `min_tokens` and the configured maximum. Its first chunk is the smallest,
because nothing is known yet about this machine; the measured rate is kept across requests, so
later prompts start at their full pace.

Every chunk also pays a fixed cost, the model's weights read once (float32 SmolLM2 on a 2-core
CPU: about 0.1 s a chunk). Quarter-second chunks spent a quarter of a long prompt's time on it
(a 431-token follow-up after 3,500 tokens of chat: 11.7 s at 0.25 s a chunk, 9.5 s at 0.75 s,
8.9 s at 1 s), so a chunk takes about three quarters of a second: a Stop still lands within
about a second, and the fixed share is near a tenth.
"""

from __future__ import annotations

TARGET_S = 0.75
MIN_TOKENS = 16
# A first measurement includes warm-up (kernel compilation, page faults): growing at most this
# factor per chunk keeps one odd timing from jumping straight to a chunk far too long.
MAX_GROWTH = 4.0


class PrefillPacer:
    """Sizes prefill chunks from the measured prefill speed (one per engine, one thread)."""

    def __init__(
        self, max_tokens: int, target_s: float = TARGET_S, min_tokens: int = MIN_TOKENS
    ) -> None:
        if max_tokens < 1:
            raise ValueError("the largest prefill chunk must be at least 1 token")
        self.max_tokens = max_tokens
        self.min_tokens = min(min_tokens, max_tokens)
        self.target_s = target_s
        self._next = self.min_tokens

    def next_chunk(self) -> int:
        """Tokens the next chunk should take."""
        return self._next

    def record(self, tokens: int, seconds: float) -> None:
        """A chunk of `tokens` took `seconds`: size the next one to take about `target_s`."""
        if tokens <= 0:
            return
        wanted = self.max_tokens if seconds <= 0 else int(tokens * self.target_s / seconds)
        wanted = min(wanted, int(max(tokens, self._next) * MAX_GROWTH))
        if tokens < self._next:
            # A chunk cut short (at a message boundary, at the prompt's end) is mostly fixed
            # cost: it may show the pace can grow, never that it must shrink.
            wanted = max(wanted, self._next)
        self._next = max(self.min_tokens, min(self.max_tokens, wanted))
