"""A chat's own context length: the overflow policies act at the chat's limit exactly as they
would for a model whose context is that long, and a bad limit is refused with a clear message."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from inference import Engine, LoadedModel, PromptError, SamplingParams, load_model
from tests.inference.engine.test_engine_overflow import GREEDY, long_chat

CHAT_LIMIT = 300


@pytest.fixture(scope="module")
def llama(tiny_models_dir: Path) -> LoadedModel:
    return load_model(tiny_models_dir / "llama")


@pytest.fixture(scope="module")
def as_if_small(llama: LoadedModel) -> Engine:
    """The same model believing its context is only CHAT_LIMIT tokens: the reference."""
    return Engine(dataclasses.replace(llama, context_length=CHAT_LIMIT), 10**9)


def test_the_model_itself_has_room_for_the_whole_chat(llama: LoadedModel) -> None:
    engine = Engine(llama, 10**9)
    messages = long_chat(8)
    assert CHAT_LIMIT < engine.count_prompt_tokens(messages) < llama.context_length
    assert engine.generate(messages, GREEDY, "c", overflow="stop").dropped_messages == ()


@pytest.mark.parametrize("overflow", ["truncate_middle", "rolling"])
def test_a_chat_limit_leaves_out_what_a_model_that_small_would(
    llama: LoadedModel, as_if_small: Engine, overflow: str
) -> None:
    messages = long_chat(8)
    limited = Engine(llama, 10**9).generate(
        messages, GREEDY, "c", overflow=overflow, context_limit=CHAT_LIMIT
    )
    expected = as_if_small.generate(messages, GREEDY, "c", overflow=overflow)
    assert limited.dropped_messages == expected.dropped_messages != ()
    assert len(messages) - 1 not in limited.dropped_messages, "the newest turn is kept"
    assert limited.token_ids == expected.token_ids
    assert limited.stats.prompt_tokens <= CHAT_LIMIT - GREEDY.max_tokens


def test_stop_refuses_at_the_chats_limit(llama: LoadedModel) -> None:
    engine = Engine(llama, 10**9)
    with pytest.raises(PromptError, match="too many for this chat's context length of 300"):
        engine.generate(long_chat(8), GREEDY, "c", overflow="stop", context_limit=CHAT_LIMIT)
    assert (
        engine.generate(
            long_chat(1), GREEDY, "c", overflow="stop", context_limit=CHAT_LIMIT
        ).dropped_messages
        == ()
    )


def test_a_reply_stops_where_the_chats_context_is_full(llama: LoadedModel) -> None:
    engine = Engine(llama, 10**9)
    messages = long_chat(1)
    room = CHAT_LIMIT - engine.count_prompt_tokens(messages)
    params = dataclasses.replace(GREEDY, max_tokens=200)
    result = engine.generate(messages, params, "c", context_limit=CHAT_LIMIT)
    assert 0 < room < 200
    assert result.finish_reason == "context" and len(result.token_ids) == room


def test_a_limit_above_the_models_context_changes_nothing(llama: LoadedModel) -> None:
    engine = Engine(dataclasses.replace(llama, context_length=240), 10**9)
    with pytest.raises(PromptError, match="this model's context of 240 tokens"):
        engine.generate(long_chat(8), GREEDY, "c", overflow="stop", context_limit=100_000)


def test_variants_honour_the_chats_limit(llama: LoadedModel, as_if_small: Engine) -> None:
    messages = long_chat(8)
    variants = Engine(llama, 10**9).generate_variants(
        messages, GREEDY, seeds=[0, 1], conversation_id="c", context_limit=CHAT_LIMIT
    )
    expected = as_if_small.generate(messages, GREEDY, "c")
    assert {v.dropped_messages for v in variants} == {expected.dropped_messages}


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        (100, "at least 256 tokens"),
        ("512", "whole number"),
        (300.5, "whole number"),
        (True, "whole number"),
    ],
)
def test_a_bad_chat_limit_is_refused_clearly(
    llama: LoadedModel, limit: object, message: str
) -> None:
    with pytest.raises(PromptError, match=message):
        Engine(llama, 10**9).generate(
            long_chat(1),
            SamplingParams(max_tokens=2),
            "c",
            context_limit=limit,  # type: ignore[arg-type]
        )


def test_the_app_refuses_below_the_engines_minimum() -> None:
    from app.settings import MIN_CONTEXT_LENGTH
    from inference.prompt.context_fit import MIN_CONTEXT_LIMIT

    assert MIN_CONTEXT_LENGTH == MIN_CONTEXT_LIMIT
