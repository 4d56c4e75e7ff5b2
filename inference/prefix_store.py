"""Stored cache stacks, found by the longest common token prefix, held within a byte budget.

Entries are keyed by the exact token ids their stack has consumed (never by text, so a template
that re-renders earlier turns differently still lands on the true common prefix). Each entry
remembers which conversations used it, so one conversation's entries can be dropped while a
prefix shared with another conversation stays. Eviction is least recently used; the engine
touches the whole active path after every request, so the newest conversation's branch goes last.

Runs on the inference worker thread only, like every MLX object it holds.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from itertools import count

import mlx.core as mx

from inference.cache_stack import CacheStack

_BLOCK = 256


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token tuples (or two lists)."""
    n = min(len(a), len(b))
    i = 0
    # Block-wise slice comparison runs in C; only the last block is compared token by token.
    while i + _BLOCK <= n and a[i : i + _BLOCK] == b[i : i + _BLOCK]:
        i += _BLOCK
    while i < n and a[i] == b[i]:
        i += 1
    return i


@dataclass(eq=False)
class _Entry:
    stack: CacheStack
    nbytes: int
    last_used: int
    conversations: set[Hashable] = field(default_factory=set)


class PrefixStore:
    """Cache stacks by token prefix, least recently used first out, within `budget_bytes`."""

    def __init__(self, budget_bytes: int) -> None:
        self._entries: dict[tuple[int, ...], _Entry] = {}
        self._clock = count()
        self._budget = int(budget_bytes)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def budget_bytes(self) -> int:
        return self._budget

    @budget_bytes.setter
    def budget_bytes(self, value: int) -> None:
        self._budget = int(value)
        self._evict_to(self._budget)

    def nbytes(self) -> int:
        return sum(e.nbytes for e in self._entries.values())

    def token_prefixes(self) -> list[tuple[int, ...]]:
        """The token ids of every stored entry (for tests and diagnostics)."""
        return list(self._entries)

    def lookup(
        self, tokens: Sequence[int], conversation_id: Hashable
    ) -> tuple[CacheStack | None, int]:
        """The stored stack that can serve the most leading tokens of `tokens`, and how many.

        At most `len(tokens) - 1` tokens are served. A stack counts only up to where it can be
        brought back (trim, or its whole length). Ties go to the asking conversation, then to
        the most recently used entry. The caller forks the returned stack and never writes
        into it.
        """
        query = tuple(tokens)
        # Keep one token uncached: generation needs a token to feed.
        head = query[: len(query) - 1]
        best: tuple[int, bool, int] = (0, False, -1)
        best_entry: _Entry | None = None
        for key, entry in self._entries.items():
            common = common_prefix_length(key, head)
            if common == 0 or not entry.stack.can_fork_at(common):
                continue
            rank = (common, conversation_id in entry.conversations, entry.last_used)
            if rank > best:
                best, best_entry = rank, entry
        if best_entry is None:
            return None, 0
        best_entry.last_used = next(self._clock)
        return best_entry.stack, best[0]

    def put(self, stack: CacheStack, conversation_id: Hashable) -> bool:
        """Store `stack` (the store takes it over) and return whether it is held.

        A stack larger than the whole budget is not stored and evicts nothing. A stack that can
        rewind anywhere makes every stored rewindable prefix of it redundant, so those go.
        """
        key = tuple(stack.tokens)
        if not key:
            return False
        existing = self._entries.get(key)
        if existing is not None:
            existing.conversations.add(conversation_id)
            existing.last_used = next(self._clock)
            return True
        nbytes = stack.nbytes
        if nbytes > self._budget:
            return False
        entry = _Entry(stack, nbytes, next(self._clock), {conversation_id})
        if stack.rewinds_anywhere:
            for other_key in [k for k in self._entries if len(k) < len(key)]:
                other = self._entries[other_key]
                if other.stack.rewinds_anywhere and key[: len(other_key)] == other_key:
                    entry.conversations |= other.conversations
                    del self._entries[other_key]
        self._entries[key] = entry
        self._evict_to(self._budget)
        return True

    def touch_path(self, tokens: Sequence[int], conversation_id: Hashable) -> None:
        """Mark every entry on the path `tokens` as just used, the longest last."""
        query = tuple(tokens)
        on_path = [k for k in self._entries if query[: len(k)] == k]
        for key in sorted(on_path, key=len):
            entry = self._entries[key]
            entry.conversations.add(conversation_id)
            entry.last_used = next(self._clock)

    def forget(self, conversation_id: Hashable) -> None:
        """Drop what only `conversation_id` used; entries shared with others stay."""
        dropped = False
        for key in list(self._entries):
            owners = self._entries[key].conversations
            owners.discard(conversation_id)
            if not owners:
                del self._entries[key]
                dropped = True
        if dropped:
            mx.clear_cache()

    def clear(self) -> None:
        self._entries.clear()
        mx.clear_cache()

    def _evict_to(self, budget: int) -> None:
        total = self.nbytes()
        if total <= budget:
            return
        for key, entry in sorted(self._entries.items(), key=lambda item: item[1].last_used):
            if total <= budget:
                break
            del self._entries[key]
            total -= entry.nbytes
        # Return the freed buffers to the system instead of keeping them in MLX's buffer pool.
        mx.clear_cache()
