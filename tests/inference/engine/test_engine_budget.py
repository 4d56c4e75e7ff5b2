"""Memory budget: stored cache bytes stay within it, least recently used first out."""

from __future__ import annotations

from pathlib import Path

import mlx.core as mx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inference import Engine, LoadedModel, SamplingParams, load_model
from inference.cache.trie import common_prefix_length

ONE = SamplingParams(max_tokens=1)


def ask(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def follow_up(messages: list[dict[str, str]], reply: str) -> list[dict[str, str]]:
    return [*messages, {"role": "assistant", "content": reply}, *ask("and then?")]


@pytest.fixture(scope="module", params=["llama", "qwen3_5"])
def loaded(request: pytest.FixtureRequest, tiny_models_dir: Path) -> LoadedModel:
    return load_model(tiny_models_dir / request.param)


def sizes(loaded: LoadedModel) -> tuple[int, int]:
    """(live, stored): the bytes of the live stack one short conversation is decoded in, and
    what the same conversation costs once stored in the trie (exact segments, checkpoints)."""
    engine = Engine(loaded, 10**9)
    engine.generate(ask("the cat sat on the mat"), ONE, "probe")
    live = engine.cache_bytes()
    engine.generate(ask("write code about the sea"), ONE, "other")  # stores "probe"
    return live, engine.cache_bytes() - live


def reused(engine: Engine, messages: list[dict[str, str]], reply: str, cid: str) -> bool:
    """Whether a follow-up found this conversation's own stored prefix (not just a shared few
    template tokens)."""
    result = engine.generate(follow_up(messages, reply), ONE, cid)
    return result.stats.cached_tokens > len(messages[0]["content"]) // 2


def test_least_recently_used_conversation_goes_first(loaded: LoadedModel) -> None:
    live, stored = sizes(loaded)
    engine = Engine(loaded, int(live + stored * 1.5))  # the live stack and one stored chat
    a, b, c = ask("the cat sat on the mat"), ask("tell me a story about Paris"), ask("code")
    reply_a = engine.generate(a, ONE, "a").text
    reply_b = engine.generate(b, ONE, "b").text
    engine.generate(c, ONE, "c")  # a is the least recently used: it goes
    assert engine.cache_bytes() <= engine.cache_budget_bytes
    assert reused(engine, b, reply_b, "b")
    assert not reused(engine, a, reply_a, "a")


def test_the_active_conversation_is_kept_longest(loaded: LoadedModel) -> None:
    live, stored = sizes(loaded)
    # The live stack and about two stored chats (a, with its follow-up, is twice one).
    engine = Engine(loaded, int(live + stored * 2.5))
    a, b, c = ask("the cat sat on the mat"), ask("tell me a story about Paris"), ask("code")
    reply_a = engine.generate(a, ONE, "a").text
    reply_b = engine.generate(b, ONE, "b").text
    # Back to a: its whole path becomes the most recently used, so b goes first.
    reply_a2 = engine.generate(follow_up(a, reply_a), ONE, "a").text
    engine.generate(c, ONE, "c")
    assert engine.cache_bytes() <= engine.cache_budget_bytes
    assert reused(engine, follow_up(a, reply_a), reply_a2, "a")
    assert not reused(engine, b, reply_b, "b")


def test_an_entry_larger_than_the_budget_is_not_stored_and_evicts_nothing(
    loaded: LoadedModel,
) -> None:
    live, stored = sizes(loaded)
    engine = Engine(loaded, int(live + stored * 1.5))
    short = ask("the cat sat on the mat")
    reply = engine.generate(short, ONE, "short").text
    held = engine.cache_bytes()
    long = ask("tell me a story about Paris " * 150)  # every entry of it outgrows the budget
    engine.generate(long, ONE, "long")
    assert engine.cache_bytes() <= held  # nothing of the long one is held...
    assert reused(engine, short, reply, "short")  # ...and nothing of the short one went


def test_shrinking_the_budget_evicts_and_returns_the_memory(loaded: LoadedModel) -> None:
    engine = Engine(loaded, 10**9)
    for text in ("the cat", "a story", "code"):
        engine.generate(ask(text), ONE, text)
    full = engine.cache_bytes()
    engine.cache_budget_bytes = full // 2
    assert 0 < engine.cache_bytes() <= full // 2
    assert mx.get_cache_memory() == 0  # freed buffers went back, not into MLX's pool
    engine.cache_budget_bytes = 0
    assert engine.cache_bytes() == 0


def test_forget_drops_one_conversation_and_clear_drops_all(loaded: LoadedModel) -> None:
    engine = Engine(loaded, 10**9)
    a, b = ask("the cat sat on the mat"), ask("tell me a story about Paris")
    reply_a = engine.generate(a, ONE, "a").text
    reply_b = engine.generate(b, ONE, "b").text
    engine.forget("a")
    assert not reused(engine, a, reply_a, "a")
    assert reused(engine, b, reply_b, "b")
    engine.clear_cache()
    assert engine.cache_bytes() == 0
    assert not reused(engine, b, reply_b, "b")


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    shared=st.lists(st.integers(0, 3), max_size=600),
    a=st.lists(st.integers(0, 3), max_size=300),
    b=st.lists(st.integers(0, 3), max_size=300),
)
def test_common_prefix_length_agrees_with_a_plain_scan(
    shared: list[int], a: list[int], b: list[int]
) -> None:
    left, right = tuple(shared + a), tuple(shared + b)
    pairs = enumerate(zip(left, right, strict=False))
    plain = next((i for i, (x, y) in pairs if x != y), min(len(left), len(right)))
    assert common_prefix_length(left, right) == plain
