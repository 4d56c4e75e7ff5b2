"""The draft model's caches are saved next to the main model's: after a restart, a follow-up
with a draft model restores both stacks from disk and computes only the new tokens, for both
models; their bytes count in the engine's one disk budget."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import mlx.core as mx
import pytest

from inference import Engine, LoadedModel, SamplingParams, load_model
from inference.decoding.draft_model import DRAFTS_FOLDER
from tests.tiny_models import NO_EOS, build_model

pytestmark = pytest.mark.usefixtures("free_drafts")

GREEDY = SamplingParams(max_tokens=12, logit_bias=NO_EOS, speculation="draft")
ASK = [
    {"role": "system", "content": "You are a helpful assistant. " * 6},
    {"role": "user", "content": "Tell me a story about a cat and a dog in Paris."},
]


class CountingModel:
    """A model that counts the tokens it computes (every other attribute is the model's)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.tokens = 0

    def __call__(self, inputs: mx.array, cache: Any = None) -> mx.array:
        self.tokens += inputs.shape[1]
        return self.model(inputs, cache=cache)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)


@pytest.fixture(scope="module")
def draft_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_model("llama", tmp_path_factory.mktemp("draft-disk") / "llama1", seed=1)


def counting(path: Path) -> tuple[LoadedModel, CountingModel]:
    loaded = load_model(path)
    counter = CountingModel(loaded.model)
    return dataclasses.replace(loaded, model=counter), counter


def first_reply(main: LoadedModel, draft_path: Path, caches: Path) -> list[dict[str, str]]:
    """A reply drafted by the draft model, saved; returns the follow-up conversation."""
    engine = Engine(main, 10**9, cache_dir=caches)
    engine.set_draft_model(load_model(draft_path))
    result = engine.generate(ASK, GREEDY, "a")
    assert result.stats.drafted_tokens > 0
    engine.close()
    assert list((caches / DRAFTS_FOLDER).rglob("*.safetensors")), "the draft's caches saved"
    return [*ASK, {"role": "assistant", "content": result.text}, ASK[-1]]


def follow_up(
    main: LoadedModel, draft_path: Path, caches: Path, follow: list[dict[str, str]]
) -> tuple[Any, int]:
    """The follow-up on a new engine (a restart): its stats, and the tokens the draft model
    computed for it."""
    engine = Engine(main, 10**9, cache_dir=caches)
    draft, counter = counting(draft_path)
    engine.set_draft_model(draft)
    counter.tokens = 0  # the engine's own look at the model when it is set
    result = engine.generate(follow, GREEDY, "a")
    return result.stats, counter.tokens


def test_a_follow_up_after_a_restart_restores_both_models_stacks(
    llama_path: Path, draft_path: Path, tmp_path: Path
) -> None:
    main = load_model(llama_path)
    caches = tmp_path / "caches"
    follow = first_reply(main, draft_path, caches)
    stats, draft_computed = follow_up(main, draft_path, caches, follow)
    assert stats.disk_tokens == stats.cached_tokens > 0
    assert stats.drafted_tokens > 0
    # The draft model computes the new prompt tokens and its guesses, never the old prompt.
    new_work = stats.prefill_tokens + stats.drafted_tokens + stats.generated_tokens
    assert draft_computed <= new_work < stats.prompt_tokens

    # Without its saved caches the draft model reads the whole conversation again: the check
    # above tells the two apart.
    shutil.rmtree(caches / DRAFTS_FOLDER)
    stats, draft_computed = follow_up(main, draft_path, caches, follow)
    assert draft_computed >= stats.prompt_tokens - 1


def test_draft_caches_count_in_the_disk_use_and_budget_and_are_cleared_with_the_models(
    llama_path: Path, draft_path: Path, tmp_path: Path
) -> None:
    engine = Engine(load_model(llama_path), 10**9, cache_dir=tmp_path, disk_budget_bytes=10**8)
    engine.set_draft_model(load_model(draft_path))
    assert engine.disk_budget_bytes == 10**8, "one budget, shared"
    engine.generate(ASK, GREEDY, "a")
    engine.flush()
    drafts = list((tmp_path / DRAFTS_FOLDER).rglob("*.safetensors"))
    assert drafts
    everything = sum(p.stat().st_size for p in tmp_path.rglob("*.safetensors"))
    assert engine.disk_bytes() >= everything > sum(p.stat().st_size for p in drafts)
    engine.clear_saved_caches()
    assert not list(tmp_path.rglob("*.safetensors"))
