"""The disk half of the branch cache: saving trie nodes in idle time and loading them lazily.

`SavedCaches` is the part of `BranchCache` (which derives from it) that talks to a
`CacheFolder`: at start-up it rebuilds the trie's shape from the folder's records, tensors left on
disk; `save_some` writes unsaved nodes, parents first, for a bounded time (the worker's idle
time), then applies the disk budget, least recently used leaves first; `_load` brings a node's
segments and checkpoint back when a request needs them, and a file that fails its checks takes
its subtree with it. A full disk stops saving and says so once; memory caches carry on.

Worker thread only: it makes and reads MLX arrays.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import mlx.core as mx

from inference.cache.files import ROOT_NAME, CacheFileError, CacheFolder, chained_name
from inference.cache.layers import cut_segment, decode_state, encode_state, state_arrays
from inference.cache.trie import CacheTrie, Node

if TYPE_CHECKING:
    from inference.cache.stack import CacheStack


class SavedCaches:
    """Saving and loading trie nodes; the attributes are `BranchCache`'s."""

    _trie: CacheTrie
    _folder: CacheFolder | None
    _live: CacheStack | None
    _kv: list[int]
    _snapshots: list[int]
    _read_from_disk: list[tuple[int, int]]
    disk_budget_bytes: int
    disk_error: str | None

    def _drop_subtree(self, node: Node) -> None:
        raise NotImplementedError

    def _checkpoint_live_end(self) -> None:
        raise NotImplementedError

    def _evict(self) -> None:
        raise NotImplementedError

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
        if node.saved is None or self._folder is None:
            return
        needs_kv = node.kv is None and not node.hot
        needs_checkpoint = node.checkpoint is None and node.saved.has_checkpoint
        if not needs_kv and not needs_checkpoint:
            return
        try:
            arrays, skeleton = self._folder.load(node.saved)
            kv = [(arrays[f"k{i}"], arrays[f"v{i}"]) for i in range(len(self._kv))]
            if any(k.shape[2] != len(node.tokens) or v.shape[2] != len(node.tokens) for k, v in kv):
                raise CacheFileError(f"saved cache {node.saved.file_name} has the wrong length")
            checkpoint = [decode_state(s, arrays) for s in skeleton] if skeleton else None
            if checkpoint is not None and len(checkpoint) != len(self._snapshots):
                raise CacheFileError(f"saved cache {node.saved.file_name} has another shape")
            mx.eval(kv, [state_arrays(s) for s in checkpoint or []])  # pyright: ignore[reportUnknownMemberType]  # mlx stub: eval(*args) untyped
        except (KeyError, ValueError, IndexError, RuntimeError, CacheFileError) as error:
            self._drop_subtree(node)
            self._write_index()
            if isinstance(error, CacheFileError):
                raise
            raise CacheFileError(f"saved cache was unusable ({error})") from error
        if needs_kv:
            node.kv = kv
            self._read_from_disk.append((node.start, node.end))
        if needs_checkpoint:
            node.checkpoint = checkpoint

    def has_unsaved(self) -> bool:
        return self._folder is not None and self.disk_error is None and any(self._unsaved_nodes())

    def _unsaved_nodes(self) -> list[Node]:
        return [
            n
            for n in self._trie.nodes()
            if n.saved is None
            and (n.kv is not None or n.hot)
            and n.dropped_at != n.last_used
            and _saved_parent(n)
        ]

    def save_some(self, seconds: float) -> bool:
        """Save unsaved nodes, parents first, for about `seconds`; True if some remain. A full
        disk (or any write error) stops saving and is reported once in `disk_error`; the
        caches stay in memory."""
        if self._folder is None or self.disk_error is not None:
            return False
        deadline = time.monotonic() + seconds
        wrote = False
        # A restart resumes where the live branch ends only if that end has a checkpoint; it
        # takes memory, so the budget is applied again.
        self._checkpoint_live_end()
        self._evict()
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
            oldest.dropped_at = oldest.last_used
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


def _saved_parent(node: Node) -> bool:
    parent = node.parent
    return parent is None or parent.parent is None or parent.saved is not None


def _name(node: Node) -> str:
    name = ROOT_NAME
    for step in node.path():
        name = chained_name(name, step.tokens)
    return name
