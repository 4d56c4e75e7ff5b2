"""Message boundaries (where checkpoints go) cost the same however long the chat, and agree with
tokenizing each message prefix, the slow and obvious way."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from inference import load_model
from inference.prompt.chat_prompt import (
    RenderedPrompt,
    generation_suffix,
    message_boundaries,
    render_ids,
    render_prompt,
)
from tests.perf import best_of

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}


def chat(turns: int) -> list[dict[str, str]]:
    messages = [SYSTEM]
    for i in range(turns):
        messages += [
            {"role": "user", "content": f"How do I sort a list in Python, take {i}?"},
            {"role": "assistant", "content": "Use sorted(items) for a new list or items.sort()."},
        ]
    return [*messages, {"role": "user", "content": "And then?"}]


def by_tokenizing_prefixes(tokenizer: object, messages: list[dict[str, str]]) -> set[int]:
    ids = render_ids(tokenizer, messages, add_generation_prompt=True)
    ends = set()
    for end in range(1, len(messages) + 1):
        prefix = render_ids(tokenizer, messages[:end], add_generation_prompt=False)
        if ids[: len(prefix)] == prefix:
            ends.add(len(prefix))
    return ends


@pytest.mark.parametrize("kind", ["qwen3_5", "dhara"])
def test_boundaries_from_token_spans_agree_with_tokenizing_each_prefix(
    tiny_models_dir: Path, kind: str
) -> None:
    tokenizer = load_model(tiny_models_dir / kind).tokenizer
    messages = chat(5)
    prompt = render_prompt(tokenizer, messages)
    assert prompt.ids == render_ids(tokenizer, messages, add_generation_prompt=True)
    assert prompt.offsets is not None  # the fast path is the one measured here
    found = message_boundaries(tokenizer, messages, prompt, 0, generation_suffix(tokenizer))
    slow = message_boundaries(tokenizer, messages, RenderedPrompt(prompt.ids), 0)
    assert found == slow
    assert set(found) <= by_tokenizing_prefixes(tokenizer, messages)
    # The system prompt and the latest messages, the last user turn among them.
    user_end = len(render_ids(tokenizer, messages, add_generation_prompt=False))
    assert user_end in found and len(found) == 4
    # Only what lies beyond the cached part is looked for.
    assert message_boundaries(tokenizer, messages, prompt, user_end - 1, None) == [user_end]


# Boundary work over rendering the same chat's prompt once, which every request does anyway
# (measured 0.18-0.27x): spans read off that one rendering; a render per message would be
# hundreds of times it.
MAX_OVER_ONE_RENDER = 1.0


@pytest.mark.perf
def test_boundary_work_for_a_400_message_chat_costs_less_than_one_rendering(
    tiny_models_dir: Path,
) -> None:
    tokenizer = load_model(tiny_models_dir / "qwen3_5").tokenizer
    messages = chat(200)
    prompt = render_prompt(tokenizer, messages)
    suffix = generation_suffix(tokenizer)

    def seconds(work: Callable[[], object]) -> float:
        started = time.perf_counter()
        work()
        return time.perf_counter() - started

    def share() -> float:
        found = seconds(lambda: message_boundaries(tokenizer, messages, prompt, 0, suffix))
        return found / seconds(lambda: render_prompt(tokenizer, messages))

    ratio = best_of(share, MAX_OVER_ONE_RENDER)
    assert ratio < MAX_OVER_ONE_RENDER, f"boundaries took {ratio:.1f}x one rendering"
