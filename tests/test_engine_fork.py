"""Forks are cheap and safe: new array handles, no allocation, no cross-branch writes.

The regression test for the aliasing trap (docs/ARCHITECTURE.md, "Forks never share arrays")
decodes two forks of one stack in interleaved steps; a fork that shared the parent's `mx.array`
objects makes both branches read each other's keys (a control fork that does exactly that shows
the test catches it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import mlx.core as mx
import pytest
from mlx.utils import tree_flatten
from mlx_lm.models.cache import KVCache

from inference import LoadedModel, load_model
from inference.cache_stack import CacheStack
from tests.tiny_models import KINDS

PREFIX = list(range(40, 100))  # under 256 tokens: one KV buffer, no reallocation hides aliasing
BRANCH_A = [201, 300, 17, 99]
BRANCH_B = [77, 13, 250, 251, 8]
STEPS = 6


@pytest.fixture(scope="module")
def models(tiny_models_dir: Path) -> dict[str, LoadedModel]:
    return {kind: load_model(tiny_models_dir / kind) for kind in KINDS}


def prefilled(loaded: LoadedModel, tokens: list[int]) -> CacheStack:
    stack = CacheStack.empty(loaded.model)
    loaded.model(mx.array([tokens]), cache=stack.caches)
    stack.tokens.extend(tokens)
    stack.evaluate()
    return stack


def greedy(loaded: LoadedModel, stack: CacheStack, suffix: list[int]) -> Iterator[int]:
    """Feed `suffix`, then yield greedy tokens one step at a time."""
    logits = loaded.model(mx.array([suffix]), cache=stack.caches)[0, -1]
    for _ in range(STEPS):
        token = mx.argmax(logits).item()
        yield token
        logits = loaded.model(mx.array([[token]]), cache=stack.caches)[0, -1]


def interleaved(first: Iterator[int], second: Iterator[int]) -> tuple[list[int], list[int]]:
    a, b = [], []
    for x, y in zip(first, second, strict=True):
        a.append(x)
        b.append(y)
    return a, b


def from_scratch(loaded: LoadedModel, suffix: list[int]) -> list[int]:
    return list(greedy(loaded, prefilled(loaded, PREFIX), suffix))


def branch_pair(
    loaded: LoadedModel, fork: Callable[[CacheStack], CacheStack]
) -> tuple[list[int], list[int], list[int]]:
    """Two forks decoded in interleaved steps, then the parent resumed."""
    parent = prefilled(loaded, PREFIX)
    a, b = interleaved(
        greedy(loaded, fork(parent), BRANCH_A), greedy(loaded, fork(parent), BRANCH_B)
    )
    return a, b, list(greedy(loaded, parent, BRANCH_B))


@pytest.mark.parametrize("kind", KINDS)
def test_interleaved_forks_never_see_each_others_tokens(
    models: dict[str, LoadedModel], kind: str
) -> None:
    loaded = models[kind]
    a, b, parent = branch_pair(loaded, CacheStack.fork)
    assert a == from_scratch(loaded, BRANCH_A)
    assert b == from_scratch(loaded, BRANCH_B)
    assert parent == from_scratch(loaded, BRANCH_B)  # the stored parent is untouched


def _aliasing_fork(stack: CacheStack) -> CacheStack:
    """The trap: new cache objects that hold the parent's very array objects."""
    caches = []
    for cache in stack.caches:
        child = KVCache()
        child.keys, child.values, child.offset = cache.keys, cache.values, cache.offset
        caches.append(child)
    return CacheStack(caches, list(stack.tokens))


def test_the_check_catches_an_aliasing_fork(models: dict[str, LoadedModel]) -> None:
    loaded = models["llama"]
    a, b, _ = branch_pair(loaded, _aliasing_fork)
    assert (a, b) != (from_scratch(loaded, BRANCH_A), from_scratch(loaded, BRANCH_B))


@pytest.mark.parametrize("kind", KINDS)
def test_fork_shares_no_array_object_and_allocates_nothing(
    models: dict[str, LoadedModel], kind: str
) -> None:
    parent = prefilled(models[kind], PREFIX * 5)  # 300 tokens: past gemma's wrapped window
    before = mx.get_active_memory()
    child = parent.fork()
    child.evaluate()
    assert mx.get_active_memory() == before  # O(layers): no token is copied up front
    assert child.tokens == parent.tokens and child.tokens is not parent.tokens

    def arrays(stack: CacheStack) -> set[int]:
        leaves = tree_flatten([c.state for c in stack.caches])
        return {id(a) for _, a in leaves if isinstance(a, mx.array)}

    assert all(c is not p for c, p in zip(child.caches, parent.caches, strict=True))
    assert not arrays(child) & arrays(parent)


def test_a_fork_at_an_earlier_token_continues_from_there(models: dict[str, LoadedModel]) -> None:
    loaded = models["llama"]
    longer = prefilled(loaded, PREFIX + BRANCH_A)
    branch = longer.fork(len(PREFIX))
    assert branch.tokens == PREFIX
    assert list(greedy(loaded, branch, BRANCH_B)) == from_scratch(loaded, BRANCH_B)
    assert list(greedy(loaded, longer, [5])) == list(
        greedy(loaded, prefilled(loaded, PREFIX + BRANCH_A), [5])
    )


@pytest.mark.parametrize("tokens", [100, 4000])
def test_forking_copies_nothing_however_many_tokens_are_cached(
    models: dict[str, LoadedModel], tokens: int
) -> None:
    """Fork cost is O(layers): no buffer is copied at 100 or at 4,000 cached tokens (the
    benchmark times it). Branching at an earlier token, the child's first write allocates
    only what it keeps plus one 256-slot step, not the parent's whole buffer."""
    stack = CacheStack.empty(models["llama"].model)
    for cache in stack.caches:
        kv = mx.zeros((1, 2, tokens, 16))  # the tiny llama's KV geometry
        cache.update_and_fetch(kv, kv + 0)
    stack.tokens.extend(range(tokens))
    stack.evaluate()
    before = mx.get_active_memory()
    child = stack.fork(tokens // 2)
    child.evaluate()  # slices evaluate to views of the parent's buffers
    assert mx.get_active_memory() == before
    step = mx.zeros((1, 2, 1, 16))
    child.caches[0].update_and_fetch(step, step)
    child.evaluate()
    assert child.caches[0].keys.shape[2] == tokens // 2 + 256
    assert stack.caches[0].offset == tokens  # the parent is untouched
