"""Reuse, counted: what each kind of follow-up, regenerate, edit and branch switch prefills.

On kinds whose caches can be trimmed back (llama, deepseek_v3) any stored prefix is reusable;
on the others (qwen3_5's recurrent state, gemma3's wrapped sliding window) reuse comes from the
checkpoints taken at message boundaries.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mlx_lm import stream_generate
from mlx_lm.sample_utils import make_logits_processors

from inference import Engine, GenerationResult, LoadedModel, SamplingParams, load_model
from tests.engine_reference import Comparison, check_tokens, reference
from tests.tiny_models import KINDS

TRIMMABLE = {"llama", "deepseek_v3"}
SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
ONE = SamplingParams(max_tokens=1)
SAMPLED = SamplingParams(max_tokens=4, temperature=0.8, seed=7)
# Random weights often answer with a lone byte of a multi-byte character, which reads back as
# different tokens; a history built from replies that read back as themselves lets the counts
# below be exact. Several user texts are tried until one gives such a reply.
_WORDS = ("the", "cat", "sat", "me", "story", "sea", "code", "Paris", "on", "mat")
CANDIDATES = [f"{a} {b}" for a in _WORDS for b in _WORDS]


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


@pytest.fixture(scope="module")
def models(tiny_models_dir: Path) -> dict[str, LoadedModel]:
    return {kind: load_model(tiny_models_dir / kind) for kind in KINDS}


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


def ids_of(loaded: LoadedModel, messages: list[dict[str, str]], generation: bool = True) -> list:
    return loaded.tokenizer.apply_chat_template(messages, add_generation_prompt=generation)


def turn(
    engine: Engine, path: list[dict[str, str]], avoid: str = ""
) -> tuple[list[dict], GenerationResult]:
    """Add a user turn (other than `avoid`) and a one-token reply that reads back as itself."""
    tokenizer = engine.model.tokenizer
    for text in CANDIDATES:
        if text == avoid:
            continue
        messages = [*path, user(text)]
        result = engine.generate(messages, ONE, "c")
        if tokenizer.encode(result.text, add_special_tokens=False) == list(result.token_ids):
            return [*messages, assistant(result.text)], result
    raise AssertionError("no candidate turn got a reply that reads back as itself")


def new_turn_tokens(loaded: LoadedModel, before: list[dict], after: list[dict]) -> int:
    """Tokens of `after`'s prompt beyond `before`'s prompt plus its (one-token) reply."""
    old, new = ids_of(loaded, before[:-1]), ids_of(loaded, after)
    reply = loaded.tokenizer.encode(before[-1]["content"], add_special_tokens=False)
    assert new[: len(old) + len(reply)] == old + reply  # the history is a token prefix
    return len(new) - len(old) - len(reply)


def test_follow_up_prefills_only_the_new_turn_however_long_the_history(
    models: dict[str, LoadedModel], kind: str
) -> None:
    loaded = models[kind]
    engine = Engine(loaded, 50_000_000, prefill_chunk_tokens=16)
    path = [SYSTEM]
    counts = []
    for _ in range(4):
        path, _ = turn(engine, path)
        follow = [*path, user("Tell me a story about Paris.")]
        result = engine.generate(follow, ONE, "c")
        stats = result.stats
        assert stats.prefill_tokens == new_turn_tokens(loaded, path, follow)
        assert stats.cached_tokens + stats.prefill_tokens == stats.prompt_tokens
        counts.append((stats.prompt_tokens, stats.prefill_tokens))
    prompts, prefills = zip(*counts, strict=True)
    assert prompts[-1] > prompts[0] + 60  # the history grew...
    assert len(set(prefills)) == 1  # ...and the work per follow-up did not


def test_regenerate_prefills_one_token_or_only_the_generation_prompt(
    models: dict[str, LoadedModel], kind: str
) -> None:
    loaded = models[kind]
    engine = Engine(loaded, 50_000_000, prefill_chunk_tokens=16)
    path, _ = turn(engine, [SYSTEM])
    path, _ = turn(engine, path)
    prompt = path[:-1]
    again = engine.generate(prompt, SAMPLED, "c")
    ids = ids_of(loaded, prompt)
    if kind in TRIMMABLE:
        assert again.stats.prefill_tokens == 1
    else:
        generation_prompt = len(ids) - len(ids_of(loaded, prompt, generation=False))
        assert again.stats.prefill_tokens == generation_prompt
    check_tokens(again.token_ids, reference(loaded, ids, SAMPLED, 4), Comparison(), kind)


def test_edit_prefills_from_the_edited_message_on(
    models: dict[str, LoadedModel], kind: str
) -> None:
    loaded = models[kind]
    engine = Engine(loaded, 50_000_000, prefill_chunk_tokens=16)
    path, _ = turn(engine, [SYSTEM])
    path, _ = turn(engine, path)
    # Edit the second user message: everything before it is reused.
    edited = [*path[:3], user("Write code about the sea.")]
    result = engine.generate(edited, ONE, "c")
    ids = ids_of(loaded, edited)
    start_of_edit = len(ids_of(loaded, path[:3], generation=False))
    assert result.stats.cached_tokens >= start_of_edit
    if kind not in TRIMMABLE:
        assert result.stats.cached_tokens == start_of_edit  # the checkpoint at that boundary
    assert ids[:start_of_edit] == ids_of(loaded, path[:3], generation=False)
    check_tokens(result.token_ids, reference(loaded, ids, ONE, 1), Comparison(), kind)


def test_switching_back_to_a_stored_branch_prefills_only_the_new_turn(
    models: dict[str, LoadedModel], kind: str
) -> None:
    loaded = models[kind]
    engine = Engine(loaded, 50_000_000, prefill_chunk_tokens=16)
    branch_a, _ = turn(engine, [SYSTEM])
    branch_a, _ = turn(engine, branch_a)
    # Branch b edits a's second user message, then the conversation goes back to branch a.
    branch_b, _ = turn(engine, branch_a[:3], avoid=branch_a[3]["content"])
    assert branch_b[3] != branch_a[3]
    follow = [*branch_a, user("Tell me a story about Paris.")]
    result = engine.generate(follow, ONE, "c")
    assert result.stats.prefill_tokens == new_turn_tokens(loaded, branch_a, follow)


def test_repetition_penalty_sees_the_cached_prompt(models: dict[str, LoadedModel]) -> None:
    """The penalty looks back over the prompt; with most of it cached it must still see it."""
    loaded = models["llama"]
    engine = Engine(loaded, 50_000_000)
    path, _ = turn(engine, [SYSTEM])
    follow = [*path, user("the cat sat on the mat")]
    params = SamplingParams(max_tokens=6, repetition_penalty=1.5)
    result = engine.generate(follow, params, "c")
    assert result.stats.cached_tokens > 0
    processors = make_logits_processors(repetition_penalty=1.5)
    ids = ids_of(loaded, follow)
    expected = [
        r.token
        for r in stream_generate(
            loaded.model, loaded.tokenizer, ids, max_tokens=6, logits_processors=processors
        )
    ]
    assert list(result.token_ids) == expected
    unpenalised = reference(loaded, ids, SamplingParams(max_tokens=6), 6).tokens
    assert tuple(expected) != unpenalised  # the penalty changes this reply, so the check bites
