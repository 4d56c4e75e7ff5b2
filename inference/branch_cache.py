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
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mlx.core as mx

from inference.cache_files import (
    ROOT_NAME,
    CacheFileError,
    CacheFolder,
    Record,
    chained_name,
)
from inference.cache_layers import (
    capture,
    cut_segment,
    decode_state,
    encode_state,
    exact_copy,
    is_segmentable,
    leaves,
    restore_kv,
    restore_snapshot,
    state_arrays,
)
from inference.cache_stack import CacheStack
from inference.cache_trie import CacheTrie, Node, common_prefix_length

if TYPE_CHECKING:
    import mlx.nn as nn


@dataclass(frozen=True)
class Taken:
    """A live stack for one request: it holds `cached` leading prompt tokens already, of which
    `disk_tokens` were read from saved files for this request."""

    stack: CacheStack
    cached: int
    disk_tokens: int


class BranchCache:
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

    def take(self, ids: Sequence[int], owner: Hashable) -> Taken:
        """A live stack holding the longest usable prefix of `ids` (all but the last token at
        most: generation needs one to feed). The caller prefills the rest, then gives the stack
        back with `give_back` (or `discard` after an error)."""
        head = list(ids[: len(ids) - 1])
        while True:
            try:
                return self._take(head)
            except CacheFileError:
                pass  # the broken file and what depended on it are gone: look again

    def reusable(self, head: Sequence[int]) -> tuple[int, list[Node], int]:
        """How many leading tokens of `head` a request could reuse, the trie nodes they run
        through, and how many the live stack shares. Layers that cannot rewind resume only at
        a checkpoint or at the live stack's end."""
        depth, path = self._trie.walk(head)
        live = self._live
        live_shared = common_prefix_length(live.tokens, head) if live is not None else 0
        if self.rewinds_anywhere:
            return depth, path, live_shared
        target = max((n.end for n in path if n.end <= depth and n.has_checkpoint), default=0)
        if live is not None and live_shared == len(live.tokens):
            target = max(target, live_shared)
        return target, path, live_shared

    def _take(self, head: list[int]) -> Taken:
        target, _, live_shared = self.reusable(head)
        live = self._live
        if live is not None and live_shared >= target and (
            target == len(live.tokens) or live.can_rewind()
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
        mx.eval([state_arrays(state) for state in node.checkpoint])
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
                self._drop_node(node)

    # --- forgetting ------------------------------------------------------------------------

    def forget(self, owner: Hashable) -> None:
        """Drop what only `owner` used, from memory and disk; what others share stays."""
        doomed = set()
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

    def _materialize(self, live: CacheStack, which: Any) -> None:
        copied = []
        kv_leaves = [live.leaves[i] for i in self._kv]
        for node in self._trie.nodes():
            if node.hot and which(node):
                node.kv = [cut_segment(leaf, node.start, node.end) for leaf in kv_leaves]
                node.hot = False
                copied.append(node.kv)
        if copied:
            mx.eval(copied)

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
        mx.eval(upper, node.kv)
        return upper

    def _restore(self, nodes: list[Node], n: int, room: int) -> CacheStack:
        stack = CacheStack.empty(self._model)
        stack_leaves = stack.leaves
        for slot, index in enumerate(self._kv):
            parts = [node.kv[slot] for node in nodes]
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

    # --- eviction --------------------------------------------------------------------------

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
        shared = {n for n in hot if any(_holds_data(d) for d in _below(n))}
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
        for gone in self._trie.remove(node):
            if gone.saved is not None and self._folder is not None:
                self._folder.drop(gone.saved)
            gone.saved = None

    def _drop_node(self, node: Node) -> None:
        if self._in_trie(node):
            self._drop_subtree(node)

    # --- disk ------------------------------------------------------------------------------

    def _adopt_records(self, records: Any) -> None:
        """Rebuild the trie's shape from saved records (their tensors stay on disk)."""
        by_name: dict[str, Node] = {ROOT_NAME: self._trie.root}
        assert self._folder is not None
        for record in sorted(records, key=lambda r: r.start):  # parents first
            parent = by_name.get(record.parent)
            valid = (
                parent is not None
                and record.tokens
                and parent.end == record.start
                and record.tokens[0] not in parent.children
                and chained_name(record.parent, record.tokens) == record.name
            )
            if not valid:
                self._folder.drop(record)
                continue
            assert parent is not None
            node = self._trie.grow(parent, record.tokens)
            node.saved = record
            node.owners = set(record.owners)
            node.used_at = record.last_used
            by_name[record.name] = node
        for node in sorted(self._trie.nodes(), key=lambda n: n.used_at):
            node.last_used = self._trie.stamp()
        self._folder.write_index()

    def _unsave(self, node: Node) -> None:
        """The node's content changes: its file no longer describes it."""
        if node.saved is not None and self._folder is not None:
            self._folder.drop(node.saved)
        node.saved = None

    def _load(self, node: Node) -> None:
        """Bring a disk-only node's segments (and checkpoint) into memory, noting the tokens
        read. A file that fails its checks takes its subtree with it (CacheFileError)."""
        if node.hot or node.kv is not None or node.saved is None or self._folder is None:
            return
        try:
            arrays, skeleton = self._folder.load(node.saved)
            kv = [(arrays[f"k{i}"], arrays[f"v{i}"]) for i in range(len(self._kv))]
            if any(k.shape[2] != len(node.tokens) or v.shape[2] != len(node.tokens) for k, v in kv):
                raise CacheFileError(f"saved cache {node.saved.file_name} has the wrong length")
            checkpoint = [decode_state(s, arrays) for s in skeleton] if skeleton else None
            if checkpoint is not None and len(checkpoint) != len(self._snapshots):
                raise CacheFileError(f"saved cache {node.saved.file_name} has another shape")
            mx.eval(kv, [state_arrays(s) for s in checkpoint or []])
        except (KeyError, ValueError, IndexError, RuntimeError, CacheFileError) as error:
            self._drop_subtree(node)
            self._write_index()
            if isinstance(error, CacheFileError):
                raise
            raise CacheFileError(f"saved cache was unusable ({error})") from error
        node.kv = kv
        if checkpoint is not None and node.checkpoint is None:
            node.checkpoint = checkpoint
        self._read_from_disk.append((node.start, node.end))

    def has_unsaved(self) -> bool:
        return self._folder is not None and self.disk_error is None and any(
            self._unsaved_nodes()
        )

    def _unsaved_nodes(self) -> list[Node]:
        return [
            n
            for n in self._trie.nodes()
            if n.saved is None and (n.kv is not None or n.hot) and _saved_parent(n)
        ]

    def save_some(self, seconds: float) -> bool:
        """Save unsaved nodes, parents first, for about `seconds`; True if some remain. A full
        disk (or any write error) stops saving and is reported once in `disk_error`; the
        caches stay in memory."""
        if self._folder is None or self.disk_error is not None:
            return False
        deadline = time.monotonic() + seconds
        wrote = False
        # A restart resumes where the live branch ends only if that end has a checkpoint.
        self._checkpoint_live_end()
        try:
            while time.monotonic() < deadline:
                pending = self._unsaved_nodes()
                if not pending:
                    break
                node = min(pending, key=lambda n: n.start)
                self._save(node)
                wrote = True
        except OSError as error:
            self.disk_error = f"Saved caches could not be written: {error.strerror or error}"
        finally:
            if wrote:
                self._enforce_disk_budget()
                self._write_index()
        return self.has_unsaved()

    def _save(self, node: Node) -> None:
        assert self._folder is not None
        if node.hot:
            live = self._live
            assert live is not None
            kv = [cut_segment(live.leaves[i], node.start, node.end) for i in self._kv]
        else:
            assert node.kv is not None
            kv = node.kv
        arrays: dict[str, mx.array] = {}
        for i, (k, v) in enumerate(kv):
            arrays[f"k{i}"], arrays[f"v{i}"] = k, v
        skeleton = (
            [encode_state(s, f"c{i}", arrays) for i, s in enumerate(node.checkpoint)]
            if node.checkpoint is not None
            else []
        )
        parent = node.parent
        parent_name = ROOT_NAME if parent is None or parent.parent is None else _name(parent)
        node.saved = self._folder.save(
            chained_name(parent_name, node.tokens),
            parent_name,
            node.start,
            node.tokens,
            arrays,
            skeleton,
            node.owners,
            time.time(),
        )

    def _enforce_disk_budget(self) -> None:
        assert self._folder is not None
        while self._folder.bytes_used() > self.disk_budget_bytes:
            leaves_on_disk = [
                n
                for n in self._trie.nodes()
                if n.saved is not None and not any(c.saved for c in n.children.values())
            ]
            if not leaves_on_disk:
                break
            oldest = min(leaves_on_disk, key=lambda n: (n.last_used, -n.start))
            self._folder.drop(oldest.saved)
            oldest.saved = None
            if oldest.kv is None and not oldest.hot:
                self._drop_subtree(oldest)

    def _write_index(self) -> None:
        if self._folder is None:
            return
        for node in self._trie.nodes():
            if node.saved is not None:
                node.saved.owners = [o for o in node.owners if isinstance(o, int | str)]
                node.saved.last_used = node.used_at
        try:
            self._folder.write_index()
        except OSError as error:
            self.disk_error = f"Saved caches could not be written: {error.strerror or error}"


def _below(node: Node) -> list[Node]:
    found, stack = [], list(node.children.values())
    while stack:
        child = stack.pop()
        found.append(child)
        stack.extend(child.children.values())
    return found


def _holds_data(node: Node) -> bool:
    """Whether a node has segments of its own (in memory or on disk), not only the live's."""
    return not node.hot and (node.kv is not None or node.saved is not None)


def _saved_parent(node: Node) -> bool:
    parent = node.parent
    return parent is None or parent.parent is None or parent.saved is not None


def _name(node: Node) -> str:
    name = ROOT_NAME
    for step in node.path():
        name = chained_name(name, step.tokens)
    return name


__all__ = ["BranchCache", "Record", "Taken"]
