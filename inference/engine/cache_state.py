"""Where each conversation path is cached, as plain values for the branch map.

For every path (the messages from the root to a node) the prompt a continuation there would
start with is rendered and walked through the branch cache's trie: the leading tokens a request
could reuse from memory, those it would read from saved files, and the rest it would compute.
Models with layers that cannot rewind resume only at a checkpoint (or the live stack's end), as
`BranchCache.take` does. Only ints and strings leave this module, in a `PathCacheState`: the GUI
thread never touches MLX, and this module imports none, so the app may import it for its type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from inference.cache.branch_cache import BranchCache
    from inference.engine.request_builder import RequestBuilder

type CacheTier = Literal["memory", "disk", "none"]


@dataclass(frozen=True, slots=True)
class PathCacheState:
    """Where a continuation of one path would find its prompt's `tokens`: how many lead from
    memory, how many from saved files (`disk_bytes` to read), how many must be computed, and
    the `tier` of the deepest reusable one."""

    tokens: int
    memory_tokens: int
    disk_tokens: int
    uncached_tokens: int
    disk_bytes: int
    tier: CacheTier


def cache_state(
    builder: RequestBuilder, cache: BranchCache, paths: Sequence[Sequence[Mapping[str, Any]]]
) -> list[PathCacheState]:
    """Each path's cache state, in order."""
    states: list[PathCacheState] = []
    for messages in paths:
        # The key, not the ids: a chat's image tokens are stored under their images' digests.
        ids = builder.prompt_key(messages)
        usable, path, _ = cache.reusable(ids[:-1])
        memory = disk = disk_bytes = 0
        for node in path:
            covered = min(node.end, usable) - node.start
            if covered <= 0:
                break
            if node.hot or node.kv is not None:
                memory += covered
            elif node.saved is not None:
                disk += covered
                disk_bytes += node.saved.size * covered // len(node.tokens)
        tier: CacheTier = "memory" if memory and not disk else "disk" if disk else "none"
        uncached = len(ids) - memory - disk
        states.append(PathCacheState(len(ids), memory, disk, uncached, disk_bytes, tier))
    return states
