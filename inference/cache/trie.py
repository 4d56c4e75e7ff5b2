"""A radix tree of token ids: the shape of every branch the branch cache knows.

Each node is one edge of tokens (`tokens`, covering positions [start, end) of every path through
it) with what is stored for that edge: exact key/value segments of the attention layers (`kv`),
and, where the model has layers that cannot rewind, a checkpoint of those layers' whole state at
the node's end (`checkpoint`). An edge splits where branches diverge, so a shared prefix is one
node, stored once. A node's segments may live in memory (`kv`), in the live cache stack the
engine is decoding with (`hot`: no copy of its own), or only on disk (`saved`).

Lookups walk by token id, never by text. Pure bookkeeping: no MLX calls (the arrays it holds are
made and read by the branch cache, on the worker thread).
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import count
from typing import Any

from inference.cache.layers import Segment, segment_bytes, state_bytes

_BLOCK = 256


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    n = min(len(a), len(b))
    i = 0
    # Block-wise slice comparison runs in C; only the last block is compared token by token.
    while i + _BLOCK <= n and a[i : i + _BLOCK] == b[i : i + _BLOCK]:
        i += _BLOCK
    while i < n and a[i] == b[i]:
        i += 1
    return i


@dataclass(eq=False)
class Node:
    parent: Node | None
    start: int
    tokens: list[int]
    children: dict[int, Node] = field(default_factory=lambda: {})  # Node: not defined yet here
    kv: list[Segment] | None = None
    checkpoint: list[Any] | None = None
    hot: bool = False
    saved: Any = None  # the disk record (inference.cache_files.Record) once written
    last_used: int = 0  # a logical clock: the order of use within this run
    used_at: float = 0.0  # wall time of the last use, kept across restarts for disk eviction
    # `last_used` when the disk budget dropped this node's file: not saved again until used
    # again, or a budget smaller than one node would save and drop it forever.
    dropped_at: int | None = None
    owners: set[Hashable] = field(default_factory=set[Hashable])

    @property
    def end(self) -> int:
        return self.start + len(self.tokens)

    @property
    def memory_bytes(self) -> int:
        """Bytes this node holds in memory (hot segments are counted with the live stack)."""
        held = segment_bytes(self.kv) if self.kv is not None else 0
        return held + (state_bytes(self.checkpoint) if self.checkpoint is not None else 0)

    @property
    def has_checkpoint(self) -> bool:
        return self.checkpoint is not None or bool(self.saved and self.saved.has_checkpoint)

    def path(self) -> list[Node]:
        """The nodes from the root's first child down to this one."""
        nodes: list[Node] = []
        node: Node = self
        while node.parent is not None:
            nodes.append(node)
            node = node.parent
        return nodes[::-1]


class CacheTrie:
    """The nodes, with walking, splitting, growing and pruning by token ids."""

    def __init__(self) -> None:
        self.root = Node(None, 0, [])
        self._clock = count(1)

    def nodes(self) -> Iterator[Node]:
        """Every node but the root, parents before children."""
        stack = list(self.root.children.values())
        while stack:
            node = stack.pop()
            yield node
            stack.extend(node.children.values())

    def walk(self, tokens: Sequence[int]) -> tuple[int, list[Node]]:
        """How many leading `tokens` the trie holds, and the nodes they run through (the last
        one may hold them only in part)."""
        node, depth = self.root, 0
        path: list[Node] = []
        while depth < len(tokens):
            child = node.children.get(tokens[depth])
            if child is None:
                break
            path.append(child)
            edge = child.tokens
            limit = min(len(edge), len(tokens) - depth)
            shared = common_prefix_length(edge[:limit], tokens[depth : depth + limit])
            depth += shared
            if shared < len(edge):
                break
            node = child
        return depth, path

    def split(self, node: Node, at: int, cut: Any) -> Node:
        """Make a node end at position `at` (inside `node`'s edge): the upper part becomes a new
        node holding [start, at), `node` keeps [at, end). `cut(node, at)` divides the stored
        segments and returns the upper part's. Returns the upper node."""
        offset = at - node.start
        assert 0 < offset < len(node.tokens)
        upper = Node(
            node.parent,
            node.start,
            node.tokens[:offset],
            kv=cut(node, at),
            hot=node.hot,
            last_used=node.last_used,
            owners=set(node.owners),
        )
        assert node.parent is not None
        node.parent.children[upper.tokens[0]] = upper
        node.tokens = node.tokens[offset:]
        node.start = at
        node.parent = upper
        upper.children[node.tokens[0]] = node
        return upper

    def grow(self, parent: Node, tokens: list[int]) -> Node:
        """A new leaf under `parent` for `tokens` (positions from `parent.end` on)."""
        child = Node(parent, parent.end, list(tokens))
        parent.children[tokens[0]] = child
        return child

    def descendants(self, node: Node) -> list[Node]:
        """Every node below `node`."""
        found: list[Node] = []
        stack = list(node.children.values())
        while stack:
            below = stack.pop()
            found.append(below)
            stack.extend(below.children.values())
        return found

    def remove(self, node: Node) -> list[Node]:
        """Take `node` and everything below it out of the trie; returns what went."""
        gone = [node, *self.descendants(node)]
        if node.parent is not None and node.parent.children.get(node.tokens[0]) is node:
            del node.parent.children[node.tokens[0]]
        return gone

    def touch(self, path: Sequence[Node], owner: Hashable) -> None:
        """Mark a path as just used by `owner`, its deepest node last."""
        now = time.time()
        for node in path:
            node.owners.add(owner)
            node.last_used = next(self._clock)
            node.used_at = now

    def stamp(self) -> int:
        return next(self._clock)
