"""A stack of per-layer mlx-lm caches with the exact token ids it has consumed.

A `CacheStack` is one mlx-lm cache object per layer (as `make_prompt_cache` builds them) plus its
token ledger; the invariant is that the caches have consumed exactly `tokens`. Forking gives the
child new cache objects and new array handles, so two stacks never share an `mx.array` object:
MLX slice assignment rebinds the array object in place, and a shared object would let one branch
write into the keys its sibling reads (docs/ARCHITECTURE.md, "Forks never share arrays").

All of this runs on the inference worker thread, which owns every MLX object.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import mlx.core as mx
from mlx_lm.models.cache import CacheList, KVCache, make_prompt_cache

if TYPE_CHECKING:
    import mlx.nn as nn


def _rewinds_anywhere(cache: Any) -> bool:
    """True for cache kinds that can always be trimmed back to any earlier token."""
    if isinstance(cache, CacheList):
        return all(_rewinds_anywhere(c) for c in cache.caches)
    return type(cache) is KVCache


def _fork_layer(cache: Any, n: int, excess: int) -> Any:
    """A new cache holding the first `n` tokens of `cache` (`excess` fewer than it has).

    The child shares no cache object and no `mx.array` object with `cache`.
    """
    if type(cache) is KVCache:
        # A slice to n is a new array handle and leaves the parent's spare slots behind, so the
        # child's first write allocates n + 256 slots rather than copying the parent's buffer.
        child = KVCache()
        if cache.keys is not None:
            child.keys = cache.keys[..., :n, :]
            child.values = cache.values[..., :n, :]
        child.offset = n
        return child
    # deepcopy gives every nested cache object and array a new handle (mx.array.__deepcopy__
    # shares the buffer until the first write, so this is O(1) in the number of tokens).
    child = copy.deepcopy(cache)
    if excess:
        child.trim(excess)
    return child


def _offset(cache: Any) -> int | None:
    """The tokens a layer's cache reports having seen; None for pure recurrent state."""
    if isinstance(cache, CacheList):
        return next((o for c in cache.caches if (o := _offset(c)) is not None), None)
    offset = getattr(cache, "offset", None)
    return None if offset is None else int(offset)


@dataclass(eq=False)
class CacheStack:
    """Per-layer caches plus the token ids they have consumed (`len(tokens)` == cache offset)."""

    caches: list[Any]
    tokens: list[int] = field(default_factory=list)

    @classmethod
    def empty(cls, model: nn.Module) -> CacheStack:
        return cls(make_prompt_cache(model))

    @property
    def rewinds_anywhere(self) -> bool:
        """Whether every layer can go back to any earlier token, so no checkpoints are needed."""
        return all(_rewinds_anywhere(c) for c in self.caches)

    @property
    def nbytes(self) -> int:
        """Bytes of the cache buffers, from mlx-lm's `nbytes` (preallocated slack included).

        A fork's attention slices count only their tokens, though until the first write they
        keep the parent's buffer alive: the count can run short by the slack of one buffer.
        """
        return sum(c.nbytes for c in self.caches)

    def cache_offset(self) -> int | None:
        """The token count the caches report, or None when no layer keeps one (pure recurrent)."""
        return next((o for c in self.caches if (o := _offset(c)) is not None), None)

    def is_consistent(self) -> bool:
        offset = self.cache_offset()
        return offset is None or offset == len(self.tokens)

    def can_fork_at(self, n: int) -> bool:
        """Whether a fork can hold exactly the first `n` tokens (trim, or the whole stack)."""
        if not 0 <= n <= len(self.tokens):
            return False
        if n == len(self.tokens):
            return True
        return all(type(c) is KVCache or c.is_trimmable() for c in self.caches)

    def fork(self, n: int | None = None) -> CacheStack:
        """A new stack holding the first `n` tokens (all by default); O(layers), not O(tokens).

        Attention KV layers are sliced to `n`; every other kind is deep-copied and trimmed. The
        child and the parent never share a cache object or an `mx.array` object.
        """
        n = len(self.tokens) if n is None else n
        if not self.can_fork_at(n):
            raise ValueError(f"this cache stack cannot go back to token {n}")
        excess = len(self.tokens) - n
        return CacheStack([_fork_layer(c, n, excess) for c in self.caches], self.tokens[:n])

    def evaluate(self) -> None:
        """Materialise pending cache computations, so a stored stack holds no lazy graph."""
        mx.eval([c.state for c in self.caches])
