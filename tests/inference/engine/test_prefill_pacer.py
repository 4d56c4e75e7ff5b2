"""Prefill chunks sized from the measured speed (issue 18 item 2): a cancel lands far sooner
than with fixed chunks on a slow machine, chunks grow to the configured maximum on a fast one,
and the reply stays exact."""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from pathlib import Path
from typing import Any

import mlx.core as mx
import pytest

from bench.sections.prefill import FIXED_CHUNK, cancel_latency, fixed_prefill
from inference import Engine, GenerationResult, LoadedModel, SamplingParams, load_model
from inference.engine.prefill_pacer import MIN_TOKENS, PrefillPacer
from tests.engine_reference import Comparison, check_tokens, reference
from tests.perf import best_of

PARAMS = SamplingParams(max_tokens=4, temperature=0.0)
LONG = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Tell me a story about a cat and a dog in Paris. " * 40},
]


def test_the_first_chunk_is_the_smallest_and_chunks_grow_to_the_maximum_on_a_fast_machine() -> None:
    pacer = PrefillPacer(512)
    sizes = [pacer.next_chunk()]
    for _ in range(6):
        pacer.record(sizes[-1], sizes[-1] / 20_000)  # 20,000 tokens/s: 512 take 26 ms
        sizes.append(pacer.next_chunk())
    assert sizes == [MIN_TOKENS, 64, 256, 512, 512, 512, 512]  # at most 4x per chunk


def test_chunks_take_about_three_quarters_of_a_second_on_a_slow_machine() -> None:
    pacer = PrefillPacer(512)
    for _ in range(5):
        size = pacer.next_chunk()
        pacer.record(size, size / 10)  # 10 tokens/s: a very slow machine
    assert pacer.next_chunk() == MIN_TOKENS  # 7 tokens would take 0.75 s: 16 at least
    pacer.record(MIN_TOKENS, MIN_TOKENS / 40)
    assert pacer.next_chunk() == 30  # faster now: 40 tokens/s x 0.75 s
    pacer.record(30, 30 / 200)
    assert pacer.next_chunk() == 120  # 200 tokens/s would be 150: at most 4x the last chunk


def test_a_chunk_cut_short_never_shrinks_the_pace() -> None:
    pacer = PrefillPacer(512)
    pacer.record(16, 16 / 100_000)
    pacer.record(64, 64 / 100_000)
    assert pacer.next_chunk() == 256
    pacer.record(3, 0.01)  # 3 tokens up to a message boundary: mostly fixed cost
    assert pacer.next_chunk() == 256


def test_a_maximum_below_the_minimum_is_the_chunk() -> None:
    pacer = PrefillPacer(8)
    pacer.record(8, 10.0)
    assert pacer.next_chunk() == 8
    with pytest.raises(ValueError):
        PrefillPacer(0)


class _SlowModel:
    """The tiny model as if on a slow machine: each forward pass waits `per_token_s` a token."""

    def __init__(self, model: Any, per_token_s: float) -> None:
        self._model = model
        self._per_token_s = per_token_s

    def __call__(self, inputs: mx.array, *args: Any, **kwargs: Any) -> mx.array:
        time.sleep(inputs.shape[1] * self._per_token_s)
        return self._model(inputs, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


@pytest.fixture(scope="module")
def llama(tiny_models_dir: Path) -> LoadedModel:
    return load_model(tiny_models_dir / "llama")


# A cancel's latency with paced chunks over the same cancel with fixed 512-token chunks, as the
# engine prefilled before the pacer, in the same run. At 10 ms a token a fixed chunk takes 5.1 s,
# so a cancel 1 s in waits 4.1 s; a paced chunk takes about 0.75 s, so even a cancel just after
# one began waits under a fifth of that: a quarter tells the pacer from no pacer.
MAX_PACED_OVER_FIXED = 0.25


@pytest.mark.perf
def test_a_cancel_during_a_long_prefill_on_a_slow_machine_lands_far_sooner_than_with_fixed_chunks(
    llama: LoadedModel,
) -> None:
    # 10 ms a token: a fixed 512-token chunk takes 5.1 s; the prompt takes about 7 s.
    slow = dataclasses.replace(llama, model=_SlowModel(llama.model, 0.010))
    ids = slow.tokenizer.apply_chat_template(LONG, add_generation_prompt=True)[:-1]
    assert len(ids) > 600

    def paced(cancel: threading.Event) -> bool:
        engine = Engine(slow, 10**8, prefill_chunk_tokens=FIXED_CHUNK)
        result = engine.generate(LONG, PARAMS, "c", cancel=cancel)
        assert isinstance(result, GenerationResult)
        return result.finish_reason != "cancelled"

    def share() -> float:
        return cancel_latency(paced, 1.0) / cancel_latency(
            lambda cancel: fixed_prefill(slow, ids, cancel), 1.0
        )

    ratio = best_of(share, MAX_PACED_OVER_FIXED)
    assert ratio < MAX_PACED_OVER_FIXED, f"a paced cancel took {ratio:.2f}x a fixed-chunk one"


def test_paced_chunks_give_the_same_reply_as_mlx_lm_from_scratch(llama: LoadedModel) -> None:
    engine = Engine(llama, 10**8, prefill_chunk_tokens=512)
    progress: list[int] = []
    result = engine.generate(
        LONG, PARAMS, "c", on_progress=lambda done, total: progress.append(done)
    )
    steps = [b - a for a, b in itertools.pairwise(progress) if b > a]
    assert steps[0] == MIN_TOKENS and max(steps) > MIN_TOKENS  # chunks of several sizes
    ids = llama.tokenizer.apply_chat_template(LONG, add_generation_prompt=True)
    check_tokens(
        result.token_ids,
        reference(llama, ids, PARAMS, PARAMS.max_tokens),
        Comparison(),
        llama.model_type,
    )
