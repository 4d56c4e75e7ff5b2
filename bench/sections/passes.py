"""Forward-pass figures (issue 19, why speculation gains what it gains on this machine): the
time of one forward pass over 1, 2, 4, 8 and 16 tokens after a cached prompt, as a verification
pass over the pending token and 0, 1, 3, 7 or 15 drafts runs.

Sizes alternate within each repeat and the best of `--pass-repeats` is kept. A pass over n
tokens yields at most n tokens, so n / (its time over a one-token pass) is the most any drafting
can gain with drafts of n - 1 tokens; on a GPU that is near n, with MLX's CPU backend near 1.
"""

from __future__ import annotations

import argparse
import time

import mlx.core as mx
from mlx_lm.generate import generation_stream
from mlx_lm.models.cache import make_prompt_cache, trim_prompt_cache

from bench.sections.lookup import REWRITE
from inference import LoadedModel

SIZES: tuple[int, ...] = (1, 2, 4, 8, 16)
HEADER = (
    "tokens in the pass",
    "best time (ms)",
    "over a one-token pass",
    "most a full accept can gain",
)


def pass_times(loaded: LoadedModel, repeats: int) -> dict[int, float]:
    """Best seconds of a forward pass over each of SIZES tokens, the rewrite prompt cached."""
    ids = loaded.tokenizer.apply_chat_template([{"role": "user", "content": REWRITE}])
    caches = make_prompt_cache(loaded.model)
    with mx.stream(generation_stream):
        mx.eval(loaded.model(mx.array(ids)[None], cache=caches))
    best = dict.fromkeys(SIZES, float("inf"))
    for _ in range(repeats):
        for size in SIZES:
            started = time.perf_counter()
            with mx.stream(generation_stream):
                mx.eval(loaded.model(mx.array(ids[:size])[None], cache=caches))
            best[size] = min(best[size], time.perf_counter() - started)
            trim_prompt_cache(caches, size)
    return best


def rows(loaded: LoadedModel, args: argparse.Namespace) -> list[tuple[str, ...]]:
    """The section's table: HEADER, then one row per pass size."""
    best = pass_times(loaded, args.pass_repeats)
    print("forward-pass times measured", flush=True)
    return [HEADER] + [
        (
            str(size),
            f"{best[size] * 1000:.1f}",
            f"{best[size] / best[1]:.2f}x",
            f"{size * best[1] / best[size]:.2f}x",
        )
        for size in SIZES
    ]
