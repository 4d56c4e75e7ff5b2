"""Context overflow is a choice: truncate the middle, roll, or stop; never a silent cut."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from inference import Engine, LoadedModel, PromptError, SamplingParams, load_model
from tests.engine_reference import Comparison, check_tokens, reference
from tests.tiny_models import NO_EOS

CONTEXT = 240
GREEDY = SamplingParams(max_tokens=8, logit_bias=NO_EOS)
SYSTEM = {"role": "system", "content": "You are a helpful assistant."}


@pytest.fixture(params=["llama", "qwen3_5"])
def small(request: pytest.FixtureRequest, tiny_models_dir: Path) -> LoadedModel:
    """A tiny model that believes its context is only CONTEXT tokens."""
    return dataclasses.replace(load_model(tiny_models_dir / request.param), context_length=CONTEXT)


def long_chat(turns: int) -> list[dict[str, str]]:
    messages = [SYSTEM]
    for i in range(turns):
        messages += [
            {"role": "user", "content": f"Tell me a story about Paris, part {i}."},
            {"role": "assistant", "content": f"The cat sat on the mat near the river, part {i}."},
        ]
    return [*messages, {"role": "user", "content": "And how does it end?"}]


def generate_exactly(engine: Engine, messages: list[dict[str, str]], overflow: str):
    result = engine.generate(messages, GREEDY, "c", overflow=overflow)
    kept = [m for i, m in enumerate(messages) if i not in result.dropped_messages]
    ids = engine.model.tokenizer.apply_chat_template(kept, add_generation_prompt=True)
    assert result.stats.prompt_tokens == len(ids) <= CONTEXT - GREEDY.max_tokens
    check_tokens(result.token_ids, reference(engine.model, ids, GREEDY, 8), Comparison(), overflow)
    return result


def test_truncating_the_middle_keeps_the_system_prompt_the_first_turn_and_the_latest(
    small: LoadedModel,
) -> None:
    engine = Engine(small, 10**9)
    messages = long_chat(8)
    assert engine.count_prompt_tokens(messages) > CONTEXT
    result = generate_exactly(engine, messages, "truncate_middle")
    dropped = result.dropped_messages
    assert dropped and 0 not in dropped and 1 not in dropped and 2 not in dropped
    assert not {len(messages) - 3, len(messages) - 2, len(messages) - 1} & set(dropped)
    assert list(dropped) == list(range(dropped[0], dropped[0] + len(dropped)))  # whole middle
    assert len(dropped) % 2 == 0  # whole turns: a question with its answer


def test_a_rolling_window_drops_the_oldest_turns(small: LoadedModel) -> None:
    engine = Engine(small, 10**9)
    messages = long_chat(8)
    result = generate_exactly(engine, messages, "rolling")
    assert result.dropped_messages[:2] == (1, 2)  # the first turn went first
    assert 0 not in result.dropped_messages


def test_a_truncated_prompt_is_cached_and_reused_exactly(small: LoadedModel) -> None:
    engine = Engine(small, 10**9, prefill_chunk_tokens=16)
    messages = long_chat(8)
    first = generate_exactly(engine, messages, "truncate_middle")
    again = generate_exactly(engine, messages, "truncate_middle")  # a regenerate
    assert again.dropped_messages == first.dropped_messages
    assert again.stats.cached_tokens >= first.stats.prompt_tokens - 8


def test_stop_refuses_with_a_clear_message(small: LoadedModel) -> None:
    engine = Engine(small, 10**9)
    with pytest.raises(PromptError, match="too many for this model's context of 240 tokens"):
        engine.generate(long_chat(8), GREEDY, "c", overflow="stop")
    assert generate_exactly(engine, long_chat(1), "stop").dropped_messages == ()


def test_a_last_message_too_long_for_any_policy_says_so(small: LoadedModel) -> None:
    engine = Engine(small, 10**9)
    huge = [SYSTEM, {"role": "user", "content": "the cat sat on the mat " * 60}]
    with pytest.raises(PromptError, match="shorten the last message"):
        engine.generate(huge, GREEDY, "c", overflow="truncate_middle")


def test_a_reply_that_fills_the_context_says_so(small: LoadedModel) -> None:
    engine = Engine(small, 10**9)
    messages = long_chat(1)
    prompt = engine.count_prompt_tokens(messages)
    room = CONTEXT - prompt
    assert 0 < room < 200
    result = engine.generate(messages, SamplingParams(max_tokens=200, logit_bias=NO_EOS), "c")
    assert result.finish_reason == "context"
    assert len(result.token_ids) == room


def test_an_unknown_policy_is_refused(small: LoadedModel) -> None:
    with pytest.raises(PromptError, match="Unknown overflow policy"):
        Engine(small, 10**9).generate(long_chat(8), GREEDY, "c", overflow="shrink")  # type: ignore[arg-type]


def test_the_app_offers_exactly_the_engines_policies() -> None:
    from app.settings import DEFAULT_OVERFLOW
    from app.settings import OVERFLOW_POLICIES as APP_POLICIES
    from inference.prompt.context_fit import OVERFLOW_POLICIES

    assert APP_POLICIES == OVERFLOW_POLICIES
    assert DEFAULT_OVERFLOW == "truncate_middle"
