"""Transparency with knowledge: hypothesis draws sends with knowledge excerpts kept on the turn,
edits that retrieve other excerpts, regenerates and branch switches, each turn rendered from its
stored excerpt records by the app's own wrapper (`app.generation.knowledge_block`, as
`prompt_messages` renders a stored message), and every reply must equal mlx-lm's from scratch
on the same rendered prompt. Besides, the cache must show the design's promise: a follow-up
after a turn with excerpts reuses that whole turn (it prefills only what follows), and a
regenerate reads nothing again (one token at most, on the trimmable llama)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.generation.attachments import with_attachments
from app.generation.knowledge_block import with_knowledge
from app.knowledge.excerpts import Excerpt
from inference import SamplingParams, load_model
from tests.engine_reference import template_messages
from tests.inference.engine.test_engine_transparency import (
    MAX_TOKENS,
    Chat,
    Harness,
    sampling,
    text,
)

pytestmark = pytest.mark.usefixtures("free_drafts")

EXAMPLES = 10
PASSAGES = [
    ("Manuals", "/docs/guide.pdf", 3, "the cat sat on the mat"),
    ("Manuals", "/docs/guide.pdf", 4, "a story about Paris and ```code``` told me"),
    ("Notes", "/home/notes.md", None, "the mat told a story"),
    ("Notes", "/home/paris.md", None, "Paris code on a mat"),
]
POOL = [
    Excerpt(name, path, page, "", 0, len(body), body, 1.0 - i / 10, f"{i:064d}")
    for i, (name, path, page, body) in enumerate(PASSAGES)
]
excerpt_sets = st.lists(st.sampled_from(range(len(POOL))), min_size=1, max_size=3, unique=True)
actions = st.lists(
    st.one_of(
        st.tuples(st.just("send"), text, excerpt_sets, sampling),
        st.tuples(st.just("edit"), st.integers(0, 9), text, excerpt_sets, sampling),
        st.tuples(st.just("regenerate"), sampling),
        st.tuples(st.just("switch"), st.integers(0, 9), text, excerpt_sets, sampling),
    ),
    min_size=2,
    max_size=5,
)


def turn(words: str, chosen: list[int]) -> dict[str, Any]:
    """A user turn as the store keeps it: the person's words and the excerpt records."""
    return {"role": "user", "words": words, "records": [POOL[i].as_record() for i in chosen]}


def rendered(path: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The path as a prompt shows it, each user turn rendered afresh from its stored records
    as `prompt_messages` renders a stored message (so a wrapper that changed between turns
    would show as a cache miss)."""
    shown = []
    for message in path:
        if "records" in message:
            records = message["records"]
            wrapped = with_knowledge(with_attachments(message["words"], records), records)
            message = {**message, "content": wrapped}
        shown.append(message)
    return shown


def play(harness: Harness, steps: list[tuple], seen: Counter[str]) -> None:
    """Each sequence opens with a turn that read excerpts, then plays the drawn steps."""
    harness.sequences += 1
    harness.engine.cache_budget_bytes = 10**9  # nothing evicted: the cache figures must show
    chat = Chat([])
    opening = ("send", "tell me a story", [0, 2], SamplingParams(max_tokens=MAX_TOKENS))
    for step in [opening, *steps]:
        kind, params = step[0], step[-1]
        before = chat.path
        if kind == "send":
            result = harness.run(chat, rendered([*chat.path, turn(step[1], step[2])]), params, "k")
            if before and before[-1]["role"] == "assistant":
                # A follow-up: the whole previous turn, its excerpts included, was cached.
                prompt = harness.loaded.tokenizer.apply_chat_template(
                    template_messages(before[:-1]), add_generation_prompt=True
                )
                assert result.stats.cached_tokens >= len(prompt)
                seen["follow-up"] += 1
        elif kind == "regenerate" and chat.path and chat.path[-1]["role"] == "assistant":
            result = harness.run(chat, rendered(chat.path[:-1]), params, "k")
            assert result.stats.prefill_tokens <= 1
            seen["regenerate"] += 1
        elif kind == "edit":
            users = [i for i, m in enumerate(chat.path) if m["role"] == "user"]
            if users:
                at = users[step[1] % len(users)]
                edited = rendered([*chat.path[:at], turn(step[2], step[3])])
                harness.run(chat, edited, params, "k")
                seen["edit"] += 1
        elif kind == "switch":
            if chat.branches:
                chat.path = chat.branches[step[1] % len(chat.branches)]
            harness.run(chat, rendered([*chat.path, turn(step[2], step[3])]), params, "k")
            seen["switch"] += 1


def test_turns_with_excerpts_match_from_scratch_generation(
    tiny_models_dir: Path, tmp_path: Path
) -> None:
    # The model's whole context: no turn is left out, so the cache figures are the design's.
    harness = Harness(load_model(tiny_models_dir / "llama"), tmp_path / "caches")
    seen: Counter[str] = Counter()

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(steps=actions)
    def check(steps: list[tuple]) -> None:
        play(harness, steps, seen)

    check()
    assert harness.sequences >= EXAMPLES
    assert set(seen) == {"follow-up", "regenerate", "edit", "switch"}, seen  # all were drawn
    assert len(harness.comparison.near_ties) <= harness.generations // 20
