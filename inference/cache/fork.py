"""Forks of a live stack: independent copies that start where the stack stands.

Regenerate ×N decodes several replies from one computed prompt, each from its own fork. An
attention `KVCache` forks into a new cache holding slices of the keys and values (a slice is a
new array object, so the fork's first write copies instead of writing into its parent); every
other kind is deep-copied. No `mx.array` object is ever shared between forks
(docs/ARCHITECTURE.md, "Forks never share arrays").
"""

from __future__ import annotations

import copy
from typing import Any

from mlx_lm.models.cache import CacheList, KVCache

from inference.cache.stack import CacheStack


def fork_stack(stack: CacheStack) -> CacheStack:
    """An independent stack with the same caches and token ledger."""
    return CacheStack([fork_cache(cache) for cache in stack.caches], list(stack.tokens))


def fork_cache(cache: Any) -> Any:
    if isinstance(cache, CacheList):
        return CacheList(*(fork_cache(inner) for inner in cache.caches))
    if type(cache) is KVCache:
        forked = KVCache()
        if cache.keys is not None and cache.values is not None:
            forked.keys = cache.keys[..., : cache.offset, :]
            forked.values = cache.values[..., : cache.offset, :]
        forked.offset = cache.offset
        return forked
    return copy.deepcopy(cache)
