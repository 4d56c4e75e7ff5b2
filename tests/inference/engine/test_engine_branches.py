"""Branches from the trie are safe, shared and fast: new array handles, one copy of a shared
prefix, no restore to continue the branch just generated, contiguous caches with room to grow.

The regression test for the aliasing trap (docs/ARCHITECTURE.md, "Forks never share arrays")
alternates two branches of one conversation; a checkpoint that kept the live cache's own array
objects makes a branch read the other's state, and a control run with such a checkpoint shows
the test catches it.
"""

from __future__ import annotations

from pathlib import Path

import mlx.core as mx
import pytest

import inference.cache.branch_cache as branch_cache
from inference import Engine, LoadedModel, SamplingParams, load_model
from inference.cache.layers import leaves, state_arrays
from inference.cache.stack import CacheStack
from tests.engine_reference import Comparison, check_tokens, reference
from tests.tiny_models import KINDS, NO_EOS

SYSTEM = {"role": "system", "content": "You are a helpful assistant. " * 4}
GREEDY = SamplingParams(max_tokens=6, logit_bias=NO_EOS)


@pytest.fixture(scope="module")
def models(tiny_models_dir: Path) -> dict[str, LoadedModel]:
    return {kind: load_model(tiny_models_dir / kind) for kind in KINDS}


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def exact(engine: Engine, messages: list[dict[str, str]], cid: str) -> list[dict[str, str]]:
    """Generate, check against mlx-lm from an empty cache, return the path with the reply."""
    loaded = engine.model
    result = engine.generate(messages, GREEDY, cid)
    ids = loaded.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    expected = reference(loaded, ids, GREEDY, GREEDY.max_tokens)
    check_tokens(result.token_ids, expected, Comparison(), f"{loaded.model_type} {cid}")
    return [*messages, {"role": "assistant", "content": result.text}]


def alternate_branches(engine: Engine) -> None:
    """Two branches of one conversation (an edit of its second message), continued in turn."""
    root = [SYSTEM, user("Tell me a story about Paris.")]
    a = exact(engine, root, "c")
    b = exact(engine, [SYSTEM, user("Write code about the sea.")], "c")
    for step in range(3):
        a = exact(engine, [*a, user(f"go on {step}")], "c")
        b = exact(engine, [*b, user(f"and then {step}")], "c")
    # Regenerating each branch's last reply (twice) resumes from that branch's checkpoints.
    for again in (a[:-1], b[:-1], a[:-1], b[:-1]):
        exact(engine, again, "c")


@pytest.mark.parametrize("kind", KINDS)
def test_alternating_branches_never_see_each_others_tokens(
    models: dict[str, LoadedModel], kind: str
) -> None:
    alternate_branches(Engine(models[kind], 10**9, prefill_chunk_tokens=16))


def test_the_check_catches_a_restore_that_shares_arrays(
    models: dict[str, LoadedModel], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The trap: a restored stack holding the checkpoint's own state objects, which its writes
    # then change in place, so the next branch restored from that checkpoint starts wrong.
    # (qwen3_5's recurrent state list is written in place on every step; gemma3's window is
    # re-concatenated by the prefill first, which hides the trap from this scenario.)
    monkeypatch.setattr(branch_cache, "restore_snapshot", _aliasing_restore)
    with pytest.raises(AssertionError):
        alternate_branches(Engine(models["qwen3_5"], 10**9, prefill_chunk_tokens=16))


def _aliasing_restore(leaf: object, state: object) -> None:
    leaf.state = state  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", KINDS)
def test_a_restored_branch_shares_no_array_object_with_the_trie(
    models: dict[str, LoadedModel], kind: str
) -> None:
    engine = Engine(models[kind], 10**9, prefill_chunk_tokens=16)
    first = exact(engine, [SYSTEM, user("Tell me a story about Paris.")], "c")
    exact(engine, [SYSTEM, user("Write code about the sea.")], "c")
    exact(engine, [*first, user("go on")], "c")  # back to the first branch: a restore
    cache = engine._cache  # the branch cache's own parts, looked at from outside
    live = cache._live
    assert live is not None
    held = set()
    for node in cache.nodes():
        for k, v in node.kv or []:
            held |= {id(k), id(v)}
        held |= {id(a) for state in node.checkpoint or [] for a in state_arrays(state)}
    in_live = {id(a) for leaf in leaves(live.caches) for a in state_arrays(leaf.state)}
    assert held and in_live
    assert not held & in_live


def test_siblings_store_their_shared_prefix_once(models: dict[str, LoadedModel]) -> None:
    """Eight regenerations of one long prompt cost about one stack, not eight."""
    loaded = models["llama"]
    engine = Engine(loaded, 10**9)
    prompt = [SYSTEM, user("The quick brown fox jumps over the lazy dog. " * 40)]
    params = SamplingParams(max_tokens=20, temperature=0.8, logit_bias=NO_EOS)
    for seed in range(8):
        result = engine.generate(prompt, SamplingParams(**{**params.__dict__, "seed": seed}), "c")
    one = CacheStack.empty(loaded.model)
    ids = loaded.tokenizer.apply_chat_template(prompt, add_generation_prompt=True)
    loaded.model(mx.array([ids + [0] * 20]), cache=one.caches)
    one.evaluate()
    assert result.stats.prompt_tokens > 500
    assert engine.cache_bytes() <= 1.3 * one.nbytes
    # The count is what MLX really holds: exact copies, no hidden buffers behind slices.
    held = engine.cache_bytes()
    del result, one
    mx.clear_cache()
    before = mx.get_active_memory()
    engine.clear_cache()
    assert before - mx.get_active_memory() == pytest.approx(held, rel=0.05)


def test_continuing_the_branch_just_generated_restores_nothing(
    models: dict[str, LoadedModel], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = Engine(models["llama"], 10**9)
    restores: list[int] = []
    real = branch_cache.BranchCache._restore

    def counting(self: branch_cache.BranchCache, nodes: list, n: int, room: int) -> CacheStack:
        restores.append(n)
        return real(self, nodes, n, room)

    monkeypatch.setattr(branch_cache.BranchCache, "_restore", counting)
    path = exact(engine, [SYSTEM, user("Tell me a story about Paris.")], "c")
    path = exact(engine, [*path, user("go on")], "c")
    exact(engine, path[:-1], "c")  # a regenerate rewinds the live stack in place
    exact(engine, [SYSTEM, user("Write code about the sea.")], "c")  # shares only the start
    assert restores == []
    exact(engine, [*path, user("and then?")], "c")  # back to the first branch
    assert len(restores) == 1  # rebuilt from the trie


def test_a_restored_branch_is_contiguous_with_room_to_grow(
    models: dict[str, LoadedModel],
) -> None:
    engine = Engine(models["llama"], 10**9)
    first = exact(engine, [SYSTEM, user("Tell me a story about Paris.")], "c")
    exact(engine, [SYSTEM, user("Write code about the sea.")], "c")
    follow = [*first, user("go on")]
    result = engine.generate(follow, GREEDY, "c")
    live = engine._cache._live
    assert live is not None
    keys = live.caches[0].keys
    total = result.stats.prompt_tokens + len(result.token_ids)
    assert keys.shape[2] % 256 == 0 and keys.shape[2] >= total  # grew in place, not per token
