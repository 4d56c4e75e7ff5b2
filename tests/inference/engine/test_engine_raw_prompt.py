"""A raw prompt (the local server's /v1/completions) goes through the engine's own prefill and
decode: its tokens equal a from-scratch mlx-lm run on the same ids, on every cache kind, and a
prompt that continues an earlier one reuses that one's cache instead of computing it again."""

from __future__ import annotations

from pathlib import Path

import pytest

from inference import Engine, LoadedModel, PromptError, SamplingParams, load_model
from tests.engine_reference import Comparison, check_tokens, reference
from tests.tiny_models import KINDS, NO_EOS

TRIMMABLE = {"llama", "deepseek_v3"}
MAX_TOKENS = 4
GREEDY = SamplingParams(max_tokens=MAX_TOKENS, logit_bias=NO_EOS, speculation="off")
SEEDED = SamplingParams(
    max_tokens=MAX_TOKENS, temperature=0.8, seed=11, logit_bias=NO_EOS, speculation="off"
)
# Longer than a prefill chunk, so the prompt is computed in several.
PROMPT = [40 + (i * 7) % 200 for i in range(45)]


@pytest.fixture(scope="module", params=KINDS)
def loaded(request: pytest.FixtureRequest, tiny_models_dir: Path) -> LoadedModel:
    return load_model(tiny_models_dir / request.param)


def test_a_raw_prompt_matches_mlx_lm_and_a_continuation_reuses_its_cache(
    loaded: LoadedModel,
) -> None:
    engine = Engine(loaded, 50_000_000, prefill_chunk_tokens=16)
    kind = loaded.model_type
    stats = Comparison()
    first = engine.complete(PROMPT, GREEDY)
    check_tokens(first.token_ids, reference(loaded, PROMPT, GREEDY, MAX_TOKENS), stats, kind)
    assert first.stats.cached_tokens == 0
    assert first.finish_reason == "length"

    # A client appending the completion and a word of its own, and asking for more: all that
    # was computed is reused, on every kind (the stack's end is stored as a checkpoint).
    more = [*PROMPT, *first.token_ids, 77]
    second = engine.complete(more, SEEDED)
    check_tokens(second.token_ids, reference(loaded, more, SEEDED, MAX_TOKENS), stats, kind)
    assert second.stats.cached_tokens == len(PROMPT) + MAX_TOKENS
    assert second.stats.prefill_tokens == 1

    # The same prompt again: caches that can be trimmed back give all but its last token; the
    # others have no checkpoint inside it (a raw prompt has no message boundaries).
    again = engine.complete(PROMPT, SEEDED)
    check_tokens(again.token_ids, reference(loaded, PROMPT, SEEDED, MAX_TOKENS), stats, kind)
    assert again.stats.cached_tokens == (len(PROMPT) - 1 if kind in TRIMMABLE else 0)


def test_a_completion_cut_by_the_context_says_so_and_a_prompt_too_long_is_refused(
    tiny_models_dir: Path,
) -> None:
    loaded = load_model(tiny_models_dir / "llama")
    context = loaded.context_length
    assert context is not None
    engine = Engine(loaded, 50_000_000, prefill_chunk_tokens=16)
    near_full = [40] * (context - 2)
    cut = engine.complete(near_full, GREEDY)
    assert cut.finish_reason == "context"
    assert len(cut.token_ids) == 2
    with pytest.raises(PromptError, match="1 too many"):
        engine.complete([40] * context, GREEDY)
    with pytest.raises(PromptError, match="vocabulary"):
        engine.complete([10**6], GREEDY)
    with pytest.raises(PromptError, match="empty"):
        engine.complete("", GREEDY)
