"""Speculative decoding (prompt lookup): faster, never different.

Every reply with speculation on equals mlx-lm's plain from-scratch generation, token for token,
greedy or seeded sampling, with logits processors, on every cache kind; kinds whose caches
cannot be trimmed back decline to speculate (nothing drafted). The caches hold exactly what the
ledger says however the reply ends.
"""

from __future__ import annotations

import threading
from pathlib import Path

import mlx.core as mx
import pytest
from mlx_lm.models.cache import make_prompt_cache

from inference import Engine, GenerationResult, LoadedModel, SamplingParams, load_model
from inference.decoding.draft_length import PROBE_EVERY, DraftLength, PassTimes
from inference.decoding.prompt_lookup import PromptLookup
from inference.decoding.speculative import PromptLookupDrafter, SpeculativeDecoder
from tests.engine_reference import Comparison, check_tokens, reference
from tests.tiny_models import NO_EOS

REWINDING = ("llama", "deepseek_v3")
MAX_TOKENS = 40
# Something to copy: the tiny models echo runs of it, so drafts get accepted.
REPEAT = [
    {
        "role": "user",
        "content": "Repeat: the cat sat on the mat and told me a story about Paris code. "
        "the cat sat on the mat",
    }
]


def _check_against_reference(
    loaded: LoadedModel,
    messages: list[dict[str, str]],
    params: SamplingParams,
    result: GenerationResult,
) -> None:
    ids = loaded.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    expected = reference(loaded, ids, params, params.max_tokens)
    check_tokens(result.token_ids, expected, Comparison(), loaded.model_type)


def test_prompt_lookup_copies_what_followed_the_longest_latest_match() -> None:
    lookup = PromptLookup([1, 2, 3, 9, 1, 2, 3, 4, 5, 6, 2, 3], min_ngram=2, max_ngram=3)
    # The 3-gram "6 2 3" never occurred before, so the 2-gram "2 3" decides, at its latest
    # occurrence (followed by 4 5 6, not by 9).
    assert lookup.draft(3) == [4, 5, 6]
    assert lookup.draft(1) == [4]
    lookup.extend([4, 5])
    # Now the 3-gram "3 4 5" matches earlier and wins.
    assert lookup.draft(2) == [6, 2]
    assert PromptLookup([1, 2, 3, 4]).draft(4) == []  # nothing occurred twice
    assert lookup.draft(0) == []


def test_draft_length_follows_acceptance_where_extra_tokens_are_cheap() -> None:
    times = PassTimes()
    length = DraftLength(times, maximum=8, start=2)
    assert length.limit() == 0  # the first pass is plain: it measures a step
    length.update(0, 0, 0.100)
    assert length.limit() == 2  # the cost of a drafted token is not known yet: try
    length.update(2, 2, 0.104)  # a GPU: two more tokens for 4 % more time
    assert length.limit() == 4
    length.update(4, 4, 0.108)
    length.update(8, 8, 0.116)
    assert length.limit() == 8
    length.update(8, 1, 0.116)
    assert length.limit() == 2  # one more than the accepted run
    for _ in range(6):
        length.update(2, 0, 0.104)  # nothing right any more: stop drafting
    assert length.limit() == 0


def test_drafting_is_declined_where_each_drafted_token_costs_a_step() -> None:
    """MLX on a CPU: a pass over k + 1 tokens takes about k + 1 steps, so even perfect drafts
    gain nothing and plain decoding keeps its speed."""
    times = PassTimes()
    length = DraftLength(times, start=4)
    length.update(0, 0, 0.1)
    assert length.limit() == 4
    length.update(4, 4, 0.5)
    assert length.limit() == 0
    # Learnt once per engine: the next reply does not try again, but for a one-token probe
    # now and then (a measurement spoilt by a moment of load is taken again).
    later = DraftLength(times)
    assert [later.limit() for _ in range(PROBE_EVERY)] == [0] * (PROBE_EVERY - 1) + [1]
    assert times.may_pay()  # too few measurements to give up for good
    for _ in range(8):
        length.update(8, 8, 0.9)  # even perfect drafts of 8 cannot pay
    assert not times.may_pay()  # the engine decodes plainly from now on


def test_an_engine_that_learnt_drafting_cannot_pay_decodes_plainly(llama_path: Path) -> None:
    loaded = load_model(llama_path)
    engine = Engine(loaded, 10**8)
    params = SamplingParams(max_tokens=MAX_TOKENS, logit_bias=NO_EOS)
    engine._lookup_times.record(0, 0.1)
    for _ in range(8):
        engine._lookup_times.record(8, 0.9)
    result = engine.generate(REPEAT, params, "c")
    assert result.stats.drafted_tokens == 0
    _check_against_reference(loaded, REPEAT, params, result)


@pytest.mark.usefixtures("free_drafts")
@pytest.mark.parametrize(
    "params",
    [
        SamplingParams(max_tokens=MAX_TOKENS, logit_bias=NO_EOS),
        SamplingParams(max_tokens=MAX_TOKENS, temperature=0.8, seed=7, logit_bias=NO_EOS),
        SamplingParams(max_tokens=MAX_TOKENS, repetition_penalty=1.3, logit_bias=NO_EOS),
    ],
    ids=["greedy", "seeded", "penalty"],
)
def test_speculative_replies_equal_plain_generation_on_every_kind(
    tiny_model_path: Path, params: SamplingParams
) -> None:
    loaded = load_model(tiny_model_path)
    engine = Engine(loaded, 10**8, prefill_chunk_tokens=16)
    result = engine.generate(REPEAT, params, "c")
    assert len(result.token_ids) == MAX_TOKENS
    _check_against_reference(loaded, REPEAT, params, result)
    plain = Engine(loaded, 10**8).generate(
        REPEAT, SamplingParams(**{**params.__dict__, "speculation": "off"}), "c"
    )
    assert result.token_ids == plain.token_ids
    assert result.text == plain.text and result.finish_reason == plain.finish_reason
    assert plain.stats.drafted_tokens == 0
    # The next turn reuses the stack speculation left behind and is still exact.
    follow = [*REPEAT, {"role": "assistant", "content": result.text}, REPEAT[0]]
    again = engine.generate(follow, params, "c")
    _check_against_reference(loaded, follow, params, again)
    assert again.stats.cached_tokens > 0
    stats = (result.stats, again.stats)
    if loaded.model_type in REWINDING:
        assert sum(s.drafted_tokens for s in stats) > 0
        if params.temperature == 0:
            assert sum(s.accepted_tokens for s in stats) > 0
    else:
        # Recurrent state, sliding windows and convolution windows cannot take drafts back.
        assert all(s.drafted_tokens == 0 for s in stats)
    assert all(s.accepted_tokens <= s.drafted_tokens for s in stats)


@pytest.mark.usefixtures("free_drafts")
@pytest.mark.parametrize("kind", REWINDING)
def test_the_cache_holds_exactly_the_tokens_seen_wherever_the_reader_stops(
    tiny_models_dir: Path, kind: str
) -> None:
    """Stop strings, cancel and the end of a reply all stop reading mid-draft: the caches must
    then hold the last prompt token and each token read, no more, no fewer."""
    loaded = load_model(tiny_models_dir / kind)
    ids = loaded.tokenizer.apply_chat_template(REPEAT, add_generation_prompt=True)
    params = SamplingParams(logit_bias=NO_EOS)
    for stop_after in range(1, 25):
        caches = make_prompt_cache(loaded.model)
        loaded.model(mx.array(ids[:-1])[None], cache=caches)
        decoder = SpeculativeDecoder(
            loaded.model,
            loaded.tokenizer,
            caches,
            ids,
            30,
            params.make_sampler(),
            params.make_logits_processors(ids[:-1]),
            PromptLookupDrafter(ids),
            DraftLength(PassTimes()),
        )
        responses = iter(decoder)
        for _, _ in zip(range(stop_after), responses, strict=False):
            pass
        responses.close()
        assert caches[0].offset == len(ids) + stop_after
    assert decoder.accepted > 0


@pytest.mark.usefixtures("free_drafts")
def test_a_cancelled_speculative_reply_leaves_a_reusable_exact_cache(llama_path: Path) -> None:
    loaded = load_model(llama_path)
    engine = Engine(loaded, 10**8, prefill_chunk_tokens=16)
    params = SamplingParams(max_tokens=MAX_TOKENS, logit_bias=NO_EOS)
    cancel = threading.Event()
    seen: list[str] = []

    def on_token(text: str) -> None:
        seen.append(text)
        if len(seen) == 7:
            cancel.set()

    cut = engine.generate(REPEAT, params, "c", on_token=on_token, cancel=cancel)
    assert cut.finish_reason == "cancelled"
    assert 7 <= len(cut.token_ids) < MAX_TOKENS
    reply = {"role": "assistant", "content": cut.text}
    follow = [*REPEAT, reply, {"role": "user", "content": "go"}]
    again = engine.generate(follow, params, "c")
    first = loaded.tokenizer.apply_chat_template(REPEAT, add_generation_prompt=True)
    assert again.stats.cached_tokens > len(first)  # the reply's tokens were reused too
    _check_against_reference(loaded, follow, params, again)


def test_speculation_off_decodes_one_token_per_pass(llama_path: Path) -> None:
    loaded = load_model(llama_path)
    result = Engine(loaded, 10**8).generate(
        REPEAT, SamplingParams(max_tokens=MAX_TOKENS, logit_bias=NO_EOS, speculation="off"), "c"
    )
    assert result.stats.drafted_tokens == result.stats.accepted_tokens == 0
