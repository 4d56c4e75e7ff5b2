from collections.abc import Callable

import mlx.core as mx

Sampler = Callable[[mx.array], mx.array]
LogitsProcessor = Callable[[mx.array, mx.array], mx.array]

def make_sampler(
    temp: float = 0.0,
    top_p: float = 0.0,
    min_p: float = 0.0,
    min_tokens_to_keep: int = 1,
    top_k: int = 0,
    xtc_probability: float = 0.0,
    xtc_threshold: float = 0.1,
    xtc_special_tokens: list[int] | None = None,
) -> Sampler: ...
def make_logits_processors(
    logit_bias: dict[int, float] | None = None,
    repetition_penalty: float | None = None,
    repetition_context_size: int | None = 20,
    presence_penalty: float | None = None,
    presence_context_size: int | None = 20,
    frequency_penalty: float | None = None,
    frequency_context_size: int | None = 20,
) -> list[LogitsProcessor]: ...
def apply_top_k(logprobs: mx.array, top_k: int) -> mx.array: ...
def apply_min_p(logprobs: mx.array, min_p: float, min_tokens_to_keep: int = 1) -> mx.array: ...
def apply_top_p(logprobs: mx.array, top_p: float) -> mx.array: ...
