"""Where each conversation path is cached, as plain values for the branch map.

For every path (the messages from the root to a node) the prompt a continuation there would
start with is rendered and walked through the branch cache's trie: the leading tokens a request
could reuse from memory, those it would read from saved files, and the rest it would compute.
Models with layers that cannot rewind resume only at a checkpoint (or the live stack's end), as
`BranchCache.take` does. Only ints and strings leave this module: the GUI thread never touches
MLX.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from inference.cache.branch_cache import BranchCache
    from inference.engine.request_builder import RequestBuilder

TIERS = ("memory", "disk", "none")


def cache_state(
    builder: RequestBuilder, cache: BranchCache, paths: Sequence[Sequence[Mapping[str, Any]]]
) -> list[dict[str, Any]]:
    """Per path: `tokens` (of its prompt), `memory_tokens`, `disk_tokens`, `uncached_tokens`,
    `disk_bytes` (to read from saved files), and `tier`: "memory", "disk" or "none" — where
    the deepest reusable token lies."""
    states: list[dict[str, Any]] = []
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
        tier = "memory" if memory and not disk else "disk" if disk else "none"
        states.append(
            {
                "tokens": len(ids),
                "memory_tokens": memory,
                "disk_tokens": disk,
                "uncached_tokens": len(ids) - memory - disk,
                "disk_bytes": disk_bytes,
                "tier": tier,
            }
        )
    return states
