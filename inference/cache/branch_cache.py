"""The branch cache: every prefix the engine has computed, stored once, in memory and on disk.

It keeps a token trie (`CacheTrie`) whose nodes hold exact key/value segments of their own edge
and, for models with layers that cannot rewind, checkpoints at message boundaries; and one
**live** stack — the ordinary mlx-lm caches of the branch generated last. The live stack is the
storage of its own path (those nodes are `hot`: no second copy), so continuing the branch just
generated needs no restore. A request elsewhere first copies the live stack's segments into the
trie (exact sizes), then rebuilds its branch from the trie with one concatenation per layer,
moving those segments into the new live stack. Bytes are counted once: the live stack's buffers
plus what the nodes hold.

Eviction is least recently used, leaves first, the live branch last; a live stack larger than
the whole budget is dropped rather than wiping the rest. With a cache folder, nodes are saved in
the worker's idle time (`save_some`) and load lazily when a request can use them.

Worker thread only: it owns MLX arrays.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mlx.core as mx

from inference.cache.eviction import Eviction
from inference.cache.files import (
    CacheFileError,
    CacheFolder,
)
from inference.cache.layers import (
    Segment,
    capture,
    exact_copy,
    is_segmentable,
    leaves,
    restore_kv,
    restore_snapshot,
    state_arrays,
)
from inference.cache.saving import SavedCaches
from inference.cache.stack import CacheStack
from inference.cache.trie import CacheTrie, Node, common_prefix_length

if TYPE_CHECKING:
    import mlx.nn as nn


# Token ranges (start, end) that must be computed whole: no stored prefix may end inside one.
Spans = Sequence[tuple[int, int]]


def outside(whole: Spans, position: int) -> int:
    """`position`, or the start of the range in `whole` it would cut."""
    return next((start for start, end in whole if start < position < end), position)


@dataclass(frozen=True)
class Taken:
    """A live stack for one request: it holds `cached` leading prompt tokens already, of which
    `disk_tokens` were read from saved files for this request."""

    stack: CacheStack
    cached: int
    disk_tokens: int


class BranchCache(Eviction, SavedCaches):
    """Stored caches for one model. See the module docstring."""

    def __init__(self, model: nn.Module, budget_bytes: int, folder: CacheFolder | None) -> None:
        self._model = model
        self._budget = int(budget_bytes)
        self._trie = CacheTrie()
        self._live: CacheStack | None = None
        kinds = [is_segmentable(leaf) for leaf in leaves(CacheStack.empty(model).caches)]
        self._kv = [i for i, segmentable in enumerate(kinds) if segmentable]
        self._snapshots = [i for i, segmentable in enumerate(kinds) if not segmentable]
        self._folder = folder
        self.disk_budget_bytes = 0
        self.disk_error: str | None = None
        # Token ranges the current request read from saved files.
        self._read_from_disk: list[tuple[int, int]] = []
        if folder is not None:
            self._adopt_records(folder.records.values())

    # --- sizes and budget ------------------------------------------------------------------

    @property
    def rewinds_anywhere(self) -> bool:
        """Whether every layer is a plain KV cache, so any prefix can be restored."""
        return not self._snapshots

    @property
    def budget_bytes(self) -> int:
        return self._budget

    @budget_bytes.setter
    def budget_bytes(self, value: int) -> None:
        self._budget = int(value)
        self._evict()

    def nbytes(self) -> int:
        live = self._live.nbytes if self._live is not None else 0
        return live + sum(node.memory_bytes for node in self._trie.nodes())

    def disk_bytes(self) -> int:
        return self._folder.bytes_used() if self._folder is not None else 0

    def nodes(self) -> list[Node]:
        return list(self._trie.nodes())

    # --- one request -----------------------------------------------------------------------

    def take(self, ids: Sequence[int], owner: Hashable, whole: Spans = ()) -> Taken:
        """A live stack holding the longest usable prefix of `ids` (all but the last token at
        most: generation needs one to feed) that ends inside none of the `whole` token ranges.
        The caller prefills the rest, then gives the stack back with `give_back` (or `discard`
        after an error)."""
        head = list(ids[: len(ids) - 1])
        while True:
            try:
                return self._take(head, whole)
            except CacheFileError:
                pass  # the broken file and what depended on it are gone: look again

    def reusable(self, head: Sequence[int], whole: Spans = ()) -> tuple[int, list[Node], int]:
        """How many leading tokens of `head` a request could reuse, the trie nodes they run
        through, and how many the live stack shares. Layers that cannot rewind resume only at
        a checkpoint or at the live stack's end. A prefix that would end inside one of the
        `whole` ranges (an image whose tokens attend both ways) backs off to its start."""
        depth, path = self._trie.walk(head)
        depth = outside(whole, depth)
        live = self._live
        live_shared = common_prefix_length(live.tokens, head) if live is not None else 0
        live_shared = outside(whole, live_shared)
        if self.rewinds_anywhere:
            return depth, path, live_shared
        target = max(
            (
                n.end
                for n in path
                if n.end <= depth and n.has_checkpoint and outside(whole, n.end) == n.end
            ),
            default=0,
        )
        if live is not None and live_shared == len(live.tokens):
            target = max(target, live_shared)
        return target, path, live_shared

    def _take(self, head: list[int], whole: Spans) -> Taken:
        target, _, live_shared = self.reusable(head, whole)
        live = self._live
        if (
            live is not None
            and live_shared >= target
            and (target == len(live.tokens) or live.can_rewind())
        ):
            self._rewind_live(target)
            self._live = None
            return Taken(live, target, 0)
        self._release_live()
        if target == 0:
            return Taken(CacheStack.empty(self._model), 0, 0)
        self._read_from_disk = []
        nodes = self._path_to(head, target)
        for node in nodes:
            self._load(node)
        disk_tokens = sum(min(end, target) - start for start, end in self._read_from_disk)
        stack = self._restore(nodes, target, room=len(head) + 1 - target)
        stack.tokens = head[:target]
        for node in nodes:
            node.kv, node.hot = None, True  # moved into the live stack: one copy
        return Taken(stack, target, disk_tokens)

    def checkpoint(self, stack: CacheStack, owner: Hashable) -> None:
        """Record the stack's current position as a checkpoint of its non-rewindable layers
        (called by the engine at message boundaries while prefilling)."""
        if not self._snapshots:
            return
        path = self._adopt_path(stack.tokens)
        self._capture(stack, path[-1])
        self._trie.touch(path, owner)

    def _capture(self, stack: CacheStack, node: Node) -> None:
        node.checkpoint = [capture(stack.leaves[i]) for i in self._snapshots]
        mx.eval([state_arrays(state) for state in node.checkpoint])  # pyright: ignore[reportUnknownMemberType]  # mlx stub: eval(*args) untyped
        self._unsave(node)

    def give_back(self, stack: CacheStack, owner: Hashable) -> None:
        """Take back a stack after its request: it becomes the live stack, and the budget is
        applied (a stack larger than the whole budget is dropped, sparing the rest). Sibling
        stacks given back in turn (regenerate ×N) each first move the one before into the trie."""
        if self._live is not None and self._live is not stack:
            self._release_live()
        if not stack.is_consistent():
            self.discard(stack)
            return
        stack.evaluate()
        path = self._adopt_path(stack.tokens) if stack.tokens else []
        self._live = stack
        self._trie.touch(path, owner)
        self._evict()

    def discard(self, stack: CacheStack) -> None:
        """A stack left unusable by an error: keep what of its path can be kept."""
        self._live = stack
        try:
            self._release_live()
        except Exception:
            self._live = None
            for node in [n for n in self._trie.nodes() if n.hot]:
                self._drop_subtree(node)

    # --- forgetting ------------------------------------------------------------------------

    def forget(self, owner: Hashable, keep_saved: bool = False) -> None:
        """Drop what only `owner` used, from memory and disk; what others share stays.

        With `keep_saved`, only memory is freed: saved files stay, still listed as the owner's,
        so an undone deletion loads them again and a later full `forget` deletes them."""
        if keep_saved:
            self._free_memory_of(owner)
            return
        doomed: set[Node] = set()
        for node in self._trie.nodes():
            node.owners.discard(owner)
            if not node.owners:
                doomed.add(node)
        if not doomed:
            return
        if any(node.hot for node in doomed):
            self._release_live()
        for node in doomed:
            if node.parent is not None and node.parent not in doomed:
                self._drop_subtree(node)
        self._write_index()
        mx.clear_cache()

    def _free_memory_of(self, owner: Hashable) -> None:
        # Every path is touched whole, so a node's descendants never have owners it lacks.
        only = [node for node in self._trie.nodes() if node.owners == {owner}]
        if any(node.hot for node in only):
            self._release_live()
        for node in only:
            if node.saved is not None:
                node.kv, node.checkpoint = None, None
            elif self._in_trie(node):
                self._drop_subtree(node)
        mx.clear_cache()

    def clear(self) -> None:
        """Drop every cache held in memory (saved files stay, for later requests)."""
        self._live = None
        for node in list(self._trie.nodes()):
            node.kv, node.checkpoint, node.hot = None, None, False
            if node.saved is None and node.parent is not None:
                self._drop_subtree(node)
        mx.clear_cache()

    def clear_saved(self) -> None:
        """Delete every saved file of this cache; what is in memory stays."""
        if self._folder is None:
            return
        for node in list(self._trie.nodes()):
            node.saved = None
        self._folder.clear()
        for node in list(self._trie.nodes()):
            if node.kv is None and not node.hot and node.checkpoint is None:
                self._drop_subtree(node)

    # --- the live stack --------------------------------------------------------------------

    def _rewind_live(self, n: int) -> None:
        """Bring the live stack back to its first `n` tokens, first copying what lies beyond
        into the trie so that branch stays cached."""
        live = self._live
        assert live is not None
        if n >= len(live.tokens):
            return
        self._checkpoint_live_end()
        if n > 0:
            self._boundary(live.tokens, n)
        self._materialize(live, lambda node: node.start >= n)
        live.rewind(n)

    def _release_live(self) -> None:
        """Copy the live stack's segments into the trie and let the stack go."""
        live = self._live
        if live is None:
            return
        self._checkpoint_live_end()
        self._materialize(live, lambda node: True)
        self._live = None

    def _checkpoint_live_end(self) -> None:
        live = self._live
        if not self._snapshots or live is None or not live.tokens:
            return
        _, path = self._trie.walk(live.tokens)
        if path and path[-1].end == len(live.tokens) and not path[-1].has_checkpoint:
            self._capture(live, path[-1])

    # --- building stacks -------------------------------------------------------------------

    def _path_to(self, tokens: list[int], n: int) -> list[Node]:
        """The nodes covering exactly the first `n` of `tokens` (splitting the last if needed)."""
        self._boundary(tokens, n)
        _, path = self._trie.walk(tokens[:n])
        return path

    def _boundary(self, tokens: list[int], n: int) -> None:
        """Make a node end exactly at position `n` of `tokens`' path."""
        _, path = self._trie.walk(tokens[:n])
        if path and path[-1].end > n:
            node = path[-1]
            self._load(node)
            self._trie.split(node, n, self._cut)

    def _cut(self, node: Node, at: int) -> Any:
        """Divide a node's stored segments at position `at`; returns the upper part's."""
        self._unsave(node)
        if node.kv is None:
            return None
        cut = at - node.start
        upper = [(exact_copy(k[..., :cut, :]), exact_copy(v[..., :cut, :])) for k, v in node.kv]
        node.kv = [(exact_copy(k[..., cut:, :]), exact_copy(v[..., cut:, :])) for k, v in node.kv]
        mx.eval(upper, node.kv)  # pyright: ignore[reportUnknownMemberType]  # mlx stub: eval(*args) untyped
        return upper

    def _restore(self, nodes: list[Node], n: int, room: int) -> CacheStack:
        stack = CacheStack.empty(self._model)
        stack_leaves = stack.leaves
        for slot, index in enumerate(self._kv):
            parts = [_segments(node)[slot] for node in nodes]
            restore_kv(stack_leaves[index], parts, n, room)
        if self._snapshots:
            states = nodes[-1].checkpoint
            assert states is not None
            for state, index in zip(states, self._snapshots, strict=True):
                restore_snapshot(stack_leaves[index], state)
        stack.evaluate()
        return stack

    def _adopt_path(self, tokens: list[int]) -> list[Node]:
        """Make the trie hold `tokens` as a path whose segments the live stack holds."""
        depth, path = self._trie.walk(tokens)
        while path and path[-1].end > depth:
            with contextlib.suppress(CacheFileError):  # a broken file: its node is gone
                self._boundary(tokens, depth)
            depth, path = self._trie.walk(tokens)
        if depth < len(tokens):
            parent = path[-1] if path else self._trie.root
            path.append(self._trie.grow(parent, tokens[depth:]))
        for node in path:
            # The live stack has the same tokens computed: keep one copy.
            node.kv, node.hot = None, True
        return path


def _segments(node: Node) -> list[Segment]:
    """A node's stored segments: every node a stack is restored from has been loaded."""
    assert node.kv is not None
    return node.kv
