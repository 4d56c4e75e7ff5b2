"""A sampler that draws from its own random key, so several can sample side by side.

mlx-lm's samplers draw from MLX's global random state: after `mx.random.seed(seed)` each draw
splits the global key into (next key, key for this draw). Variants decoded in one batch cannot
share that state, so each gets a sampler that keeps its own key and splits it the same way:
variant i then draws exactly the numbers a single run seeded with its seed draws. The filters
(top-p, min-p, top-k) are mlx-lm's own functions, applied in the order `make_sampler` applies
them; they draw no random numbers.
"""

from __future__ import annotations

import mlx.core as mx
from mlx_lm.sample_utils import apply_min_p, apply_top_k, apply_top_p

from inference.decoding.sampling import Sampler, SamplingParams


def seeded_sampler(params: SamplingParams) -> Sampler:
    """A sampler for `params` that owns its random key (from `params.seed`). Greedy settings,
    or no seed, give mlx-lm's own sampler (greedy draws nothing; unseeded draws from the global
    state, as a single unseeded run does)."""
    if params.temperature == 0 or params.seed is None:
        return params.make_sampler()
    return _KeyedSampler(params, params.seed)


class _KeyedSampler:
    def __init__(self, params: SamplingParams, seed: int) -> None:
        self._params = params
        self._key = mx.random.key(seed)

    def __call__(self, logprobs: mx.array) -> mx.array:
        p = self._params
        if 0 < p.top_p < 1.0:
            logprobs = apply_top_p(logprobs, p.top_p)
        if p.min_p != 0.0:
            logprobs = apply_min_p(logprobs, p.min_p, 1)
        if p.top_k > 0:
            logprobs = apply_top_k(logprobs, p.top_k)
        # The global KeySequence's order: the first half becomes the next state, the second
        # half is this draw's key.
        self._key, draw = mx.random.split(self._key)
        return mx.random.categorical(logprobs * (1.0 / p.temperature), key=draw)
