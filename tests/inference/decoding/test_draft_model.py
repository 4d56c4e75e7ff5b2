"""Draft-model speculation: a second model with the same tokenizer guesses, the main model
decides, and the reply is the main model's own, token for token.

Two tiny llamas built from different seeds share one tokenizer; a model drafting for itself
agrees with every guess, which exercises long accepted runs.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from inference import Engine, LoadedModel, ModelLoadError, SamplingParams, load_model
from tests.engine_reference import Comparison, check_tokens, reference
from tests.tiny_models import NO_EOS, add_token, build_model

pytestmark = pytest.mark.usefixtures("free_drafts")

MAX_TOKENS = 24
GREEDY = SamplingParams(max_tokens=MAX_TOKENS, logit_bias=NO_EOS, speculation="draft")
SEEDED = dataclasses.replace(GREEDY, temperature=0.8, seed=11)
ASK = [{"role": "user", "content": "Tell me a story about a cat and a dog in Paris."}]


@pytest.fixture(scope="module")
def other_llama(tmp_path_factory: pytest.TempPathFactory) -> LoadedModel:
    """A tiny llama with other weights (seed 1) and the same tokenizer."""
    return load_model(build_model("llama", tmp_path_factory.mktemp("draft") / "llama1", seed=1))


def _exact(
    loaded: LoadedModel,
    messages: list[dict[str, str]],
    params: SamplingParams,
    tokens: tuple[int, ...],
) -> None:
    ids = loaded.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    expected = reference(loaded, ids, params, params.max_tokens)
    check_tokens(tokens, expected, Comparison(), f"{loaded.model_type} with a draft model")


@pytest.mark.parametrize("main_kind", ["llama", "deepseek_v3"])
@pytest.mark.parametrize("params", [GREEDY, SEEDED], ids=["greedy", "seeded"])
def test_replies_with_a_draft_model_equal_the_main_models_own(
    tiny_models_dir: Path, other_llama: LoadedModel, main_kind: str, params: SamplingParams
) -> None:
    main = load_model(tiny_models_dir / main_kind)
    engine = Engine(main, 10**8, prefill_chunk_tokens=16)
    engine.set_draft_model(other_llama)
    first = engine.generate(ASK, params, "a")
    _exact(main, ASK, params, first.token_ids)
    assert first.stats.drafted_tokens > 0
    follow = [*ASK, {"role": "assistant", "content": first.text}, ASK[0]]
    second = engine.generate(follow, params, "a")
    _exact(main, follow, params, second.token_ids)
    assert second.stats.cached_tokens > 0


def test_a_model_drafting_for_itself_is_always_right_and_drafts_grow(llama_path: Path) -> None:
    main = load_model(llama_path)
    engine = Engine(main, 10**8)
    engine.set_draft_model(load_model(llama_path))
    result = engine.generate(ASK, GREEDY, "a")
    _exact(main, ASK, GREEDY, result.token_ids)
    assert result.stats.accepted_tokens == result.stats.drafted_tokens
    # Drafts double while all are accepted (2, 4, 8): a few passes write the whole reply (each
    # pass gives one token more than the drafts it accepted; the first two are plain steps).
    passes = result.stats.generated_tokens - result.stats.accepted_tokens
    assert passes <= 6


def test_branch_switches_restore_both_models_caches_within_one_budget(
    llama_path: Path, other_llama: LoadedModel
) -> None:
    main = load_model(llama_path)
    budget = 400_000
    engine = Engine(main, budget, prefill_chunk_tokens=16)
    engine.set_draft_model(other_llama)
    assert engine.cache_budget_bytes == budget
    paths = {
        "a": [{"role": "user", "content": "What is the capital of France?"}],
        "b": [{"role": "user", "content": "How do I sort a list in Python?"}],
    }
    for turn in range(3):
        for cid, path in paths.items():
            result = engine.generate(path, GREEDY, cid)
            _exact(main, path, GREEDY, result.token_ids)
            assert engine.cache_bytes() <= budget
            if turn:
                assert result.stats.cached_tokens > 0
            paths[cid] = [*path, {"role": "assistant", "content": result.text}, path[0]]
    engine.cache_budget_bytes = 0
    assert engine.cache_bytes() == 0


def test_without_a_draft_model_draft_speculation_uses_prompt_lookup(llama_path: Path) -> None:
    main = load_model(llama_path)
    engine = Engine(main, 10**8)
    assert engine.draft_model is None
    result = engine.generate(ASK, GREEDY, "a")
    _exact(main, ASK, GREEDY, result.token_ids)


def test_a_draft_model_with_another_tokenizer_is_refused(llama_path: Path, tmp_path: Path) -> None:
    folder = add_token(Path(shutil.copytree(llama_path, tmp_path / "renamed")))
    engine = Engine(load_model(llama_path), 10**8)
    with pytest.raises(ModelLoadError, match="vocabularies differ"):
        engine.set_draft_model(load_model(folder))
    assert engine.draft_model is None


def test_a_draft_model_that_cannot_take_guesses_back_is_refused(tiny_models_dir: Path) -> None:
    engine = Engine(load_model(tiny_models_dir / "llama"), 10**8)
    with pytest.raises(ModelLoadError, match="cannot be taken back"):
        engine.set_draft_model(load_model(tiny_models_dir / "qwen3_5"))
