"""Reasoning templates through the engine: `template_kwargs` reach the template, the output equals
a from-scratch mlx-lm run on the same rendered prompt, and a template that drops earlier
reasoning still reuses the true common token prefix."""

from __future__ import annotations

from pathlib import Path

import pytest

from inference import Engine, SamplingParams, load_model
from inference.prompt.reasoning import ReasoningFormat, reply_splitter
from inference.prompt.template_switches import template_switches
from tests.engine_reference import Comparison, check_tokens, reference
from tests.reasoning_models import STRIPPING_TEMPLATE, SWITCH_TEMPLATE, with_template
from tests.tiny_models import CHATML_TEMPLATE, KINDS, NO_EOS

MAX_TOKENS = 6
PARAMS = SamplingParams(max_tokens=MAX_TOKENS, logit_bias=NO_EOS)
QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("think", [True, False])
def test_the_thinking_switch_reaches_the_template_and_stays_exact(
    tiny_models_dir: Path, tmp_path: Path, kind: str, think: bool
) -> None:
    loaded = load_model(with_template(tiny_models_dir / kind, tmp_path / kind, SWITCH_TEMPLATE))
    engine = Engine(loaded, 10**8, prefill_chunk_tokens=8)
    kwargs = {"enable_thinking": think}
    result = engine.generate(QUESTION, PARAMS, "c", template_kwargs=kwargs)
    ids = loaded.tokenizer.apply_chat_template(QUESTION, add_generation_prompt=True, **kwargs)
    check_tokens(result.token_ids, reference(loaded, ids, PARAMS, MAX_TOKENS), Comparison(), kind)
    assert result.stats.prompt_tokens == len(ids)
    assert engine.count_prompt_tokens(QUESTION, kwargs) == len(ids)
    # Off, the prompt closes an empty block; on, it does not: the switch changed the prompt.
    closed = loaded.tokenizer.encode("<think>\n\n</think>\n\n", add_special_tokens=False)
    on = engine.count_prompt_tokens(QUESTION, {"enable_thinking": True})
    off = engine.count_prompt_tokens(QUESTION, {"enable_thinking": False})
    assert off - on == len(closed)


def test_a_template_that_drops_earlier_reasoning_reuses_the_true_common_prefix(
    tiny_models_dir: Path, tmp_path: Path
) -> None:
    loaded = load_model(
        with_template(tiny_models_dir / "llama", tmp_path / "m", STRIPPING_TEMPLATE)
    )
    tokenizer = loaded.tokenizer
    engine = Engine(loaded, 10**8, prefill_chunk_tokens=8)
    first = engine.generate(QUESTION, PARAMS, "c")
    first_ids = tokenizer.apply_chat_template(QUESTION, add_generation_prompt=True)
    held = [*first_ids, *first.token_ids]  # what the engine's cache holds after turn 1

    # The reply as the model wrote it: reasoning, then the answer. The template drops the
    # reasoning when the reply is history.
    reply = "<think>\nThe capital is Paris.\n</think>\n\nParis."
    follow = [*QUESTION, {"role": "assistant", "content": reply}, QUESTION[0]]
    ids = tokenizer.apply_chat_template(follow, add_generation_prompt=True)
    assert tokenizer.decode(ids).count("The capital is Paris.") == 0
    common = _common_prefix(held, ids)
    # Up to the start of the reply is shared; the opened block and the reasoning are not.
    assert 0 < common < len(first_ids)

    second = engine.generate(follow, PARAMS, "c")
    assert second.stats.cached_tokens == common
    assert second.stats.prefill_tokens == len(ids) - common
    check_tokens(second.token_ids, reference(loaded, ids, PARAMS, MAX_TOKENS), Comparison(), "2")

    # A third turn reuses the whole second prompt up to the start of its reply.
    third_messages = [*follow, {"role": "assistant", "content": "Lyon."}, QUESTION[0]]
    third = engine.generate(third_messages, PARAMS, "c")
    third_ids = tokenizer.apply_chat_template(third_messages, add_generation_prompt=True)
    assert (
        common < third.stats.cached_tokens == _common_prefix([*ids, *second.token_ids], third_ids)
    )
    check_tokens(
        third.token_ids, reference(loaded, third_ids, PARAMS, MAX_TOKENS), Comparison(), "3"
    )


def test_a_prompt_that_opens_the_block_starts_the_reply_inside_it(
    tiny_models_dir: Path, tmp_path: Path
) -> None:
    loaded = load_model(
        with_template(tiny_models_dir / "llama", tmp_path / "m", STRIPPING_TEMPLATE)
    )
    splitter = reply_splitter(loaded.tokenizer, QUESTION)
    assert splitter.thinking
    splitter.feed("Paris is in France.\n</think>\n\nParis.")
    splitter.finish()
    assert (splitter.reasoning, splitter.answer) == ("Paris is in France.", "Paris.")


def test_the_switch_off_leaves_the_reply_outside_the_block(
    tiny_models_dir: Path, tmp_path: Path
) -> None:
    loaded = load_model(with_template(tiny_models_dir / "llama", tmp_path / "m", SWITCH_TEMPLATE))
    off = reply_splitter(loaded.tokenizer, QUESTION, {"enable_thinking": False})
    on = reply_splitter(loaded.tokenizer, QUESTION, {"enable_thinking": True})
    assert not off.thinking and not on.thinking
    on.feed("<think>hmm</think>Paris.")
    assert (on.reasoning, on.answer) == ("hmm", "Paris.")


def test_a_model_without_reasoning_is_unaffected(llama_path: Path) -> None:
    loaded = load_model(llama_path)
    assert ReasoningFormat.of(loaded.tokenizer) is None
    assert template_switches(loaded.tokenizer.chat_template).think is None
    splitter = reply_splitter(loaded.tokenizer, QUESTION)
    text = "  <think>literal</think> tags stay as written"
    assert splitter.feed(text) == ("", text)
    splitter.finish()
    assert (splitter.reasoning, splitter.answer) == ("", text)


def test_template_switches_are_read_from_the_template_source() -> None:
    assert template_switches(SWITCH_TEMPLATE).think == "enable_thinking"
    assert template_switches(STRIPPING_TEMPLATE).think is None
    plain = template_switches(CHATML_TEMPLATE)
    assert (plain.think, plain.effort, plain.effort_levels) == (None, None, ())
    effort = "{{ 'Reasoning: ' + (reasoning_effort or 'medium') }}{{ messages[0]['content'] }}"
    assert template_switches(effort).effort == "reasoning_effort"
    assert template_switches(effort).effort_levels == ("low", "medium", "high")
    assert template_switches({"default": CHATML_TEMPLATE, "tool_use": SWITCH_TEMPLATE}).think == (
        "enable_thinking"
    )
    # A variable the template sets itself is not a switch the person could turn.
    assert template_switches("{% set enable_thinking = true %}{{ enable_thinking }}").think is None
    assert template_switches("{% if %}").think is None  # does not parse: no switches


def _common_prefix(a: list[int], b: list[int]) -> int:
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def test_checkpoints_are_found_with_the_switches_the_prompt_was_rendered_with(
    tiny_models_dir: Path, tmp_path: Path
) -> None:
    """A recurrent model resumes a regenerate from the checkpoint after the question; the
    boundary is found only when rendered with the same effort level as the prompt."""
    template = (
        "{{ '<|im_start|>system\\nReasoning: ' + (reasoning_effort or 'medium') }}"
        "{{ '<|im_end|>\\n' }}" + CHATML_TEMPLATE
    )
    loaded = load_model(with_template(tiny_models_dir / "qwen3_5", tmp_path / "m", template))
    engine = Engine(loaded, 10**8, prefill_chunk_tokens=8)
    kwargs = {"reasoning_effort": "high"}
    engine.generate(QUESTION, PARAMS, "c", template_kwargs=kwargs)
    again = engine.generate(QUESTION, PARAMS, "c", template_kwargs=kwargs)
    question_end = loaded.tokenizer.apply_chat_template(
        QUESTION, add_generation_prompt=False, **kwargs
    )
    assert again.stats.cached_tokens == len(question_end)
    ids = loaded.tokenizer.apply_chat_template(QUESTION, add_generation_prompt=True, **kwargs)
    check_tokens(again.token_ids, reference(loaded, ids, PARAMS, MAX_TOKENS), Comparison(), "re")
