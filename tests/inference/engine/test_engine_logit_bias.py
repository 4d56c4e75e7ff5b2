"""Logit bias: validated like every sampling setting, applied through mlx-lm's own processor, and
exact against a from-scratch run whether or not the prompt was cached."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from inference import Engine, LoadedModel, SamplingError, SamplingParams, load_model
from tests.engine_reference import Comparison, check_tokens, reference
from tests.tiny_models import EOS_ID, NO_EOS, VOCAB_SIZE

HELLO = [{"role": "user", "content": "What is the capital of France?"}]


@pytest.fixture(scope="module")
def llama(llama_path: Path) -> LoadedModel:
    return load_model(llama_path)


@pytest.mark.parametrize(
    "bias",
    [
        {-1: 1.0},
        {"-1": 1.0},
        {"eos": 1.0},
        {"1.5": 1.0},
        {1.5: 1.0},
        {True: 1.0},
        {None: 1.0},
        {3: math.nan},
        {3: math.inf},
        {3: "high"},
        {3: True},
        [(3, 1.0)],
        "3",
    ],
)
def test_bad_logit_bias_is_refused(bias: object) -> None:
    with pytest.raises(SamplingError, match="logit_bias must map token ids"):
        SamplingParams(logit_bias=bias)  # type: ignore[arg-type]


def test_logit_bias_accepts_json_keys_and_is_frozen() -> None:
    given = {"5": -1, 7: 2.5, 9: -math.inf}
    params = SamplingParams(logit_bias=given)
    assert dict(params.logit_bias) == {5: -1.0, 7: 2.5, 9: -math.inf}
    given[11] = 1.0  # the caller's dict is copied, not kept
    assert 11 not in params.logit_bias
    with pytest.raises(TypeError):
        params.logit_bias[5] = 0.0  # type: ignore[index]
    assert params == SamplingParams(logit_bias={5: -1, "7": 2.5, "9": -math.inf})
    assert params != SamplingParams(logit_bias={5: -1})
    assert hash(params) == hash(SamplingParams())  # still hashable
    assert SamplingParams().logit_bias == {}


def test_banning_the_greedy_token_changes_it_as_mlx_lm_does(llama: LoadedModel) -> None:
    engine = Engine(llama, 10**8)
    ids = llama.tokenizer.apply_chat_template(HELLO, add_generation_prompt=True)
    first = engine.generate(HELLO, SamplingParams(max_tokens=1)).token_ids[0]
    banned = SamplingParams(max_tokens=4, logit_bias={first: -math.inf})
    result = engine.generate(HELLO, banned)  # the prompt now comes from the cache
    assert result.stats.cached_tokens > 0
    assert result.token_ids[0] != first
    assert first not in result.token_ids
    check_tokens(result.token_ids, reference(llama, ids, banned, 4), Comparison(), "banned")


def test_a_positive_bias_picks_the_token(llama: LoadedModel) -> None:
    engine = Engine(llama, 10**8)
    favourite = 100
    result = engine.generate(HELLO, SamplingParams(max_tokens=3, logit_bias={favourite: 1e9}))
    assert result.token_ids == (favourite,) * 3


def test_end_of_sequence_follows_the_bias(llama: LoadedModel) -> None:
    engine = Engine(llama, 10**8)
    ended = engine.generate(HELLO, SamplingParams(max_tokens=8, logit_bias={EOS_ID: 1e9}))
    assert ended.token_ids == (EOS_ID,) and ended.finish_reason == "stop" and ended.text == ""
    # Near-uniform sampling over the vocabulary: with this seed the model ends its reply early
    # (checked, so the ban below is seen to bite), and with end-of-sequence banned it cannot.
    wild = SamplingParams(max_tokens=40, temperature=100.0, seed=0)
    assert engine.generate(HELLO, wild).finish_reason == "stop"
    kept_going = engine.generate(HELLO, replace(wild, logit_bias=NO_EOS))
    assert EOS_ID not in kept_going.token_ids
    assert kept_going.finish_reason == "length" and len(kept_going.token_ids) == 40


def test_a_token_id_beyond_the_vocabulary_is_refused(llama: LoadedModel) -> None:
    engine = Engine(llama, 10**8)
    with pytest.raises(SamplingError, match=f"token {VOCAB_SIZE}.* {VOCAB_SIZE} tokens"):
        engine.generate(HELLO, SamplingParams(logit_bias={VOCAB_SIZE: -1.0}))
    last = SamplingParams(max_tokens=1, logit_bias={VOCAB_SIZE - 1: 1e9})
    assert engine.generate(HELLO, last).token_ids == (VOCAB_SIZE - 1,)
