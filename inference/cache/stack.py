"""A live stack of per-layer mlx-lm caches with the exact token ids it has consumed.

A `CacheStack` is what the model runs with: one ordinary mlx-lm cache object per layer (as
`make_prompt_cache` builds them, contiguous buffers that grow in place) plus its token ledger;
the invariant is that the caches have consumed exactly `tokens`. The branch cache hands one out
per request (continued, rewound, or rebuilt from stored segments) and takes it back after.

All of this runs on the inference worker thread, which owns every MLX object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import mlx.core as mx
from mlx_lm.models.cache import make_prompt_cache

from inference.cache.layers import leaves

if TYPE_CHECKING:
    import mlx.nn as nn


@dataclass(eq=False)
class CacheStack:
    """Per-layer caches plus the token ids they have consumed (`len(tokens)` == cache offset)."""

    caches: list[Any]
    tokens: list[int] = field(default_factory=list[int])

    @classmethod
    def empty(cls, model: nn.Module) -> CacheStack:
        return cls(make_prompt_cache(model))

    @property
    def leaves(self) -> list[Any]:
        return leaves(self.caches)

    @property
    def nbytes(self) -> int:
        """Bytes of the cache buffers, from mlx-lm's `nbytes` (preallocated room included)."""
        return sum(c.nbytes for c in self.caches)

    def cache_offset(self) -> int | None:
        """The token count the caches report, or None when no layer keeps one (pure recurrent)."""
        for leaf in self.leaves:
            offset = getattr(leaf, "offset", None)
            if offset is not None:
                return int(offset)
        return None

    def is_consistent(self) -> bool:
        offset = self.cache_offset()
        return offset is None or offset == len(self.tokens)

    def can_rewind(self) -> bool:
        """Whether every layer can go back to an earlier token right now."""
        return all(leaf.is_trimmable() for leaf in self.leaves)

    def rewind(self, n: int) -> None:
        """Forget every token after the first `n` (only when `can_rewind()`)."""
        excess = len(self.tokens) - n
        if excess > 0:
            for leaf in self.leaves:
                leaf.trim(excess)
            del self.tokens[n:]

    def evaluate(self) -> None:
        """Materialise pending cache computations, so the stack holds no lazy graph."""
        mx.eval([c.state for c in self.caches])  # pyright: ignore[reportUnknownMemberType]  # mlx stub: eval(*args) untyped
