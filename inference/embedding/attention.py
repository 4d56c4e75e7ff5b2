"""Attention that runs both ways, for a decoder trained as an encoder (EmbeddingGemma), through
mlx-lm's own model code.

mlx-lm's Gemma 3 asks its layer caches for its masks (`make_mask`), one for the global layers and
one, with the sliding window, for the local ones; without caches it builds causal masks. One
`BothWays` per layer stands in for the caches during a single pass over a batch: it holds no keys
(`update_and_fetch` hands back what it is given, `offset` stays 0 so positions start at 0) and
answers with masks in which every token of a text sees every other token of that text, never the
padding after it, and on a sliding layer only those fewer than `window // 2 + 1` positions away
either way: Hugging Face's Gemma 3 with `use_bidirectional_attention` (its config halves the
window, "exclusive bounds", and its mask is `abs(q - kv) < window`). A padding row sees itself,
so no softmax runs over nothing; no real row ever sees it.
"""

from __future__ import annotations

import mlx.core as mx


class BothWays:
    """Masks for one pass over a right-padded batch whose row `i` holds `lengths[i]` tokens."""

    offset = 0

    def __init__(self, lengths: mx.array) -> None:
        self.lengths = lengths

    def update_and_fetch(self, keys: mx.array, values: mx.array) -> tuple[mx.array, mx.array]:
        return keys, values

    def make_mask(
        self, n: int, return_array: bool = False, window_size: int | None = None
    ) -> mx.array:
        del return_array  # always an array: a string names a causal mask
        positions = mx.arange(n)
        real = positions[None, :] < self.lengths[:, None]
        mask = real[:, None, None, :] | mx.eye(n, dtype=mx.bool_)[None, None]
        if window_size is not None:
            reach = window_size // 2 + 1
            near = mx.abs(positions[:, None] - positions[None, :]) < reach
            mask = mask & near[None, None]
        return mask
