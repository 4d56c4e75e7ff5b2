"""Regenerate ×N: each variant equals a single seeded run of its seed, the prompt is computed
once, every variant stays cached as a sibling, and cancelling one leaves the others running."""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from mlx_lm.models.cache import KVCache

from inference import Engine, LoadedModel, SamplingError, SamplingParams, load_model
from tests.tiny_models import KINDS, NO_EOS

MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant. " * 3},
    {"role": "user", "content": "Tell me a story about Paris."},
]
GREEDY = SamplingParams(max_tokens=8, logit_bias=NO_EOS)
SAMPLED = SamplingParams(max_tokens=8, temperature=0.9, top_p=0.95, top_k=40)
SEEDS = [1, 2, 3, 4]


@pytest.fixture(scope="module")
def models(tiny_models_dir: Path) -> dict[str, LoadedModel]:
    return {kind: load_model(tiny_models_dir / kind) for kind in KINDS}


def singles(loaded: LoadedModel, params: SamplingParams) -> list[tuple]:
    out = []
    for seed in SEEDS:
        result = Engine(loaded).generate(MESSAGES, replace(params, seed=seed))
        out.append((result.token_ids, result.text, result.finish_reason))
    return out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("params", [GREEDY, SAMPLED], ids=["greedy", "seeded"])
def test_each_variant_equals_a_single_run_of_its_seed(
    models: dict[str, LoadedModel], kind: str, params: SamplingParams
) -> None:
    loaded = models[kind]
    streamed: dict[int, list[str]] = {i: [] for i in range(len(SEEDS))}
    results = Engine(loaded).generate_variants(
        MESSAGES, params, seeds=SEEDS, on_token=lambda i, text: streamed[i].append(text)
    )
    got = [(r.token_ids, r.text, r.finish_reason) for r in results]
    assert got == singles(loaded, params)
    assert ["".join(streamed[i]) for i in range(len(SEEDS))] == [r.text for r in results]
    if params is SAMPLED:  # different seeds really give different replies
        assert len({r.token_ids for r in results}) > 1


@pytest.mark.parametrize("kind", KINDS)
def test_prompt_is_computed_once_and_variants_stay_cached_as_siblings(
    models: dict[str, LoadedModel], kind: str
) -> None:
    engine = Engine(models[kind])
    results = engine.generate_variants(MESSAGES, SAMPLED, seeds=SEEDS, conversation_id="c")
    prompt = results[0].stats.prompt_tokens
    assert all(r.stats.cached_tokens == 0 and r.stats.prefill_tokens == prompt for r in results)
    # Every sibling's exact tokens are held in memory, not only the last one given back.
    ids = engine.model.tokenizer.apply_chat_template(MESSAGES, add_generation_prompt=True)
    for r in results:
        branch = [*ids, *r.token_ids]
        usable, nodes, _ = engine._cache.reusable(branch)
        assert usable == len(branch)
        assert all(node.hot or node.kv is not None for node in nodes)
    states = engine.cache_state(
        [[*MESSAGES, {"role": "assistant", "content": r.text}] for r in results]
    )
    # Layers that cannot rewind resume only at a checkpoint (a message boundary of the prompt).
    least = prompt - 1 if engine._cache.rewinds_anywhere else 1
    assert all(s.tier == "memory" and s.memory_tokens >= least for s in states), states
    # Regenerating one variant alone repeats it, from the cached prompt where layers rewind.
    again = engine.generate(MESSAGES, replace(SAMPLED, seed=2), "c")
    assert again.token_ids == results[1].token_ids
    if engine._cache.rewinds_anywhere:
        assert again.stats.cached_tokens == prompt - 1


def test_cancelling_one_variant_keeps_the_others(models: dict[str, LoadedModel]) -> None:
    loaded = models["llama"]
    params = replace(GREEDY, max_tokens=10)
    events = [threading.Event() for _ in SEEDS]

    def on_token(index: int, text: str) -> None:
        if index == 1:
            events[1].set()

    results = Engine(loaded).generate_variants(
        MESSAGES, params, seeds=SEEDS, on_token=on_token, cancel=events
    )
    assert results[1].finish_reason == "cancelled"
    assert 1 <= len(results[1].token_ids) < 10
    full = Engine(loaded).generate(MESSAGES, params)
    assert results[1].token_ids == full.token_ids[: len(results[1].token_ids)]
    assert [results[i].token_ids for i in (0, 2, 3)] == [full.token_ids] * 3


def test_unbatchable_caches_decode_one_after_another_with_the_same_results(
    models: dict[str, LoadedModel],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def no_batch(caches: object) -> object:
        raise ValueError("KVCache does not yet support batching with history")

    monkeypatch.setattr(KVCache, "merge", staticmethod(no_batch))
    loaded = models["llama"]
    with caplog.at_level(logging.INFO, logger="inference.engine.variants"):
        results = Engine(loaded).generate_variants(MESSAGES, SAMPLED, seeds=SEEDS)
    assert "one after another" in caplog.text
    assert [(r.token_ids, r.text, r.finish_reason) for r in results] == singles(loaded, SAMPLED)


def test_bad_requests_get_clear_errors(models: dict[str, LoadedModel]) -> None:
    engine = Engine(models["llama"])
    with pytest.raises(SamplingError, match="1 to 8 seeds"):
        engine.generate_variants(MESSAGES, GREEDY, seeds=[])
    with pytest.raises(SamplingError, match="seed must be"):
        engine.generate_variants(MESSAGES, GREEDY, seeds=[1, -2])
    with pytest.raises(SamplingError, match="2 cancel events"):
        engine.generate_variants(MESSAGES, GREEDY, seeds=[1, 2], cancel=[threading.Event()])
    assert engine.generate_variants(MESSAGES, GREEDY, seeds=[5])[0].token_ids
