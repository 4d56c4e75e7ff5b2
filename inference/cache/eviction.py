"""Keeping the branch cache within its memory budget: least recently used first, leaves before
their parents, the live branch last; a live stack larger than the whole budget is let go (after
copying out any prefix other stored branches need) rather than wiping everything else.

A mixin of `BranchCache`, whose attributes it uses. Worker thread only: it owns MLX arrays.
"""

from __future__ import annotations

from collections.abc import Callable

import mlx.core as mx

from inference.cache.files import CacheFolder
from inference.cache.layers import Segment, cut_segment
from inference.cache.stack import CacheStack
from inference.cache.trie import CacheTrie, Node


class Eviction:
    """Evicting and dropping trie nodes; the attributes are `BranchCache`'s."""

    _trie: CacheTrie
    _folder: CacheFolder | None
    _live: CacheStack | None
    _kv: list[int]
    _budget: int

    def nbytes(self) -> int:
        raise NotImplementedError

    def _materialize(self, live: CacheStack, which: Callable[[Node], bool]) -> None:
        """Copy the live stack's segments into the hot nodes `which` accepts."""
        copied: list[list[Segment]] = []
        kv_leaves = [live.leaves[i] for i in self._kv]
        for node in self._trie.nodes():
            if node.hot and which(node):
                node.kv = [cut_segment(leaf, node.start, node.end) for leaf in kv_leaves]
                node.hot = False
                copied.append(node.kv)
        if copied:
            mx.eval(copied)  # pyright: ignore[reportUnknownMemberType]  # mlx stub: eval(*args) untyped

    def _evict(self) -> None:
        total = self.nbytes()
        if total <= self._budget:
            return
        if self._live is not None and self._live.nbytes > self._budget:
            self._drop_live()
        live_path = {n for n in self._trie.nodes() if n.hot}
        candidates = sorted(
            (n for n in self._trie.nodes() if n.memory_bytes),
            key=lambda n: (n in live_path, n.last_used, -n.start),
        )
        for node in candidates:
            if self.nbytes() <= self._budget:
                break
            if node.parent is None or not self._in_trie(node):
                continue
            if node.saved is not None or node.hot:
                node.kv, node.checkpoint = None, None
            else:
                self._drop_subtree(node)
        if self.nbytes() > self._budget:
            self._drop_live()
        mx.clear_cache()

    def _drop_live(self) -> None:
        """Let the live stack go without keeping its own branch; a prefix it shares with other
        stored branches is copied out first, so they stay usable."""
        live = self._live
        if live is None:
            return
        hot = [n for n in self._trie.nodes() if n.hot]
        shared = {n for n in hot if any(_holds_data(d) for d in self._trie.descendants(n))}
        self._materialize(live, lambda node: node in shared)
        self._live = None
        for node in hot:
            if node in shared:
                continue
            node.hot = False
            if node.saved is None and self._in_trie(node):
                self._drop_subtree(node)

    def _in_trie(self, node: Node) -> bool:
        while node.parent is not None:
            if node.parent.children.get(node.tokens[0]) is not node:
                return False
            node = node.parent
        return node is self._trie.root

    def _drop_subtree(self, node: Node) -> None:
        if not self._in_trie(node):
            return  # already gone with an ancestor
        for gone in self._trie.remove(node):
            if gone.saved is not None and self._folder is not None:
                self._folder.drop(gone.saved)
            gone.saved = None


def _holds_data(node: Node) -> bool:
    """Whether a node has segments of its own (in memory or on disk), not only the live's."""
    return not node.hot and (node.kv is not None or node.saved is not None)
