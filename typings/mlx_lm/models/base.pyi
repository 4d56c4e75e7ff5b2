from typing import Any, Self

import mlx.core as mx

class BaseModelArgs:
    # The class built from the keys of `params` that it takes; the others are ignored.
    @classmethod
    def from_dict(cls, params: dict[str, Any]) -> Self: ...

# None (one token), "causal", or an array mask; `cache` is the first layer's cache.
def create_attention_mask(
    h: mx.array, cache: Any = None, window_size: int | None = None, return_array: bool = False
) -> mx.array | str | None: ...
def scaled_dot_product_attention(
    queries: mx.array,
    keys: mx.array,
    values: mx.array,
    cache: Any,
    scale: float,
    mask: mx.array | str | None,
    sinks: mx.array | None = None,
) -> mx.array: ...
