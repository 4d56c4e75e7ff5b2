"""Transparency with images: whatever the person does in a chat with pictures, every reply
equals mlx-vlm's own generation from scratch for the same messages.

Hypothesis draws sequences of actions (send with any subset of a pool of images — A and B of one
size, C of another —, edit an earlier message to add, remove or swap images, regenerate, go back
to an earlier branch and continue it, cancel during prefill, inside an image too, shrink the
cache budget, restart on the same cache folder) and plays them on one engine per vision family,
which keeps its caches from one sequence to the next. Small prefill chunks put cuts inside
images, except where image tokens attend both ways (Gemma 4): there every image is computed
whole, and no reply resumes from inside one.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inference import Engine, SamplingParams, load_model
from inference.loading.load import LoadedModel
from tests.engine_reference import Comparison, Reference, check_tokens
from tests.tiny_vision import VISION_KINDS, png_bytes
from tests.vision_reference import mlx_vlm_reference

MAX_TOKENS = 4
CHUNK = 8
BUDGET = 400_000
POOL = {"A": png_bytes(40, 30, 1), "B": png_bytes(40, 30, 2), "C": png_bytes(90, 64, 3)}
WORDS = ["the", "cat", "sat", "on", "a", "mat", "what", "is", "this", "picture"]

text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
pictures = st.lists(st.sampled_from(sorted(POOL)), max_size=2)
seeded = st.one_of(
    st.just(SamplingParams(max_tokens=MAX_TOKENS)),
    st.integers(0, 2**16).map(
        lambda seed: SamplingParams(max_tokens=MAX_TOKENS, temperature=0.8, seed=seed)
    ),
)
actions = st.lists(
    st.one_of(
        st.tuples(st.just("send"), pictures, text, seeded),
        st.tuples(st.just("edit"), st.integers(0, 9), pictures, text, seeded),
        st.tuples(st.just("regenerate"), seeded),
        st.tuples(st.just("switch"), st.integers(0, 9), text, seeded),
        st.tuples(st.just("cancel_prefill"), pictures, text, seeded),
        st.tuples(st.just("budget"), st.sampled_from([0, 60_000, BUDGET])),
        st.tuples(st.just("restart")),
    ),
    min_size=2,
    max_size=5,
)


def user_turn(names: list[str], words: str) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "image", "image": POOL[n]} for n in names]
    return {"role": "user", "content": [*parts, {"type": "text", "text": words}]}


@dataclass
class Harness:
    loaded: LoadedModel
    cache_dir: Path
    engine: Engine = field(init=False)
    comparison: Comparison = field(default_factory=Comparison)
    references: dict[str, Reference] = field(default_factory=dict)
    generations: int = 0

    def __post_init__(self) -> None:
        self.engine = self.new_engine()

    def new_engine(self) -> Engine:
        return Engine(self.loaded, BUDGET, cache_dir=self.cache_dir, prefill_chunk_tokens=CHUNK)

    def restart(self) -> None:
        self.engine.close()
        self.engine = self.new_engine()

    def run(
        self, messages: list[dict[str, Any]], params: SamplingParams, cancel_inside: bool = False
    ) -> str:
        cancel = threading.Event()

        def on_progress(done: int, total: int) -> None:
            if cancel_inside and 0 < done < total:
                cancel.set()

        result = self.engine.generate(
            messages, params, "chat", on_progress=on_progress, cancel=cancel
        )
        self.generations += 1
        self.engine.save_pending(0.05)
        stats = result.stats
        assert stats.cached_tokens + stats.prefill_tokens == stats.prompt_tokens
        # Images whose tokens attend both ways (Gemma 4) are never resumed from inside.
        whole = self.engine._builder.chat_request(
            messages, params, "chat", "truncate_middle"
        ).whole_spans
        assert not [(a, b) for a, b in whole if a < stats.cached_tokens < b]
        assert self.engine.cache_bytes() <= self.engine.cache_budget_bytes
        key = repr((messages, params.temperature, params.seed))
        if key not in self.references:
            self.references[key] = self._reference(messages, params)
        check_tokens(
            result.token_ids,
            self.references[key],
            self.comparison,
            self.loaded.model_type,
            result.finish_reason != "cancelled",
        )
        return result.text

    def _reference(self, messages: list[dict[str, Any]], params: SamplingParams) -> Reference:
        if params.temperature == 0:
            return mlx_vlm_reference(self.loaded, messages, MAX_TOKENS)
        # Sampled replies: the engine from scratch (a new engine, no caches) is the reference,
        # itself held to mlx-vlm by the greedy cases and tests/inference/vision/.
        fresh = Engine(self.loaded, BUDGET, prefill_chunk_tokens=4096)
        result = fresh.generate(messages, params)
        return Reference(result.token_ids, (1.0,) * len(result.token_ids))


def play(harness: Harness, steps: list[tuple]) -> None:
    harness.engine.cache_budget_bytes = BUDGET
    path: list[dict[str, Any]] = []
    branches: list[list[dict[str, Any]]] = []

    def reply(messages: list[dict[str, Any]], params: SamplingParams) -> None:
        nonlocal path
        answer = harness.run(messages, params)
        path = [*messages, {"role": "assistant", "content": answer}]
        branches.append(path)

    for step in steps:
        kind = step[0]
        if kind == "budget":
            harness.engine.cache_budget_bytes = step[1]
        elif kind == "restart":
            harness.restart()
        elif kind == "send":
            reply([*path, user_turn(step[1], step[2])], step[3])
        elif kind == "regenerate":
            if path:
                reply(path[:-1], step[1])
        elif kind == "edit":
            users = [i for i, m in enumerate(path) if m["role"] == "user"]
            if users:
                at = users[step[1] % len(users)]
                reply([*path[:at], user_turn(step[2], step[3])], step[4])
        elif kind == "switch":
            if branches:
                path = branches[step[1] % len(branches)]
            reply([*path, user_turn([], step[2])], step[3])
        else:  # cancel during prefill (often inside an image), then send it again
            messages = [*path, user_turn(step[1], step[2])]
            harness.run(messages, step[3], cancel_inside=True)
            reply(messages, step[3])


@pytest.fixture(scope="module")
def harnesses(
    tiny_vision_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Harness]]:
    root = tmp_path_factory.mktemp("vision-transparency")
    made = {
        kind: Harness(load_model(tiny_vision_dir / kind), root / f"caches-{kind}")
        for kind in VISION_KINDS
    }
    yield made
    print(
        "\nvision transparency: "
        + "; ".join(
            f"{kind}: {h.generations} generations, {h.comparison.exact} exact, "
            f"{len(h.comparison.near_ties)} near-tie divergences"
            for kind, h in made.items()
        )
    )


@pytest.mark.parametrize("kind", VISION_KINDS)
def test_every_reply_with_images_equals_mlx_vlm_from_scratch(
    harnesses: dict[str, Harness], kind: str
) -> None:
    harness = harnesses[kind]

    @settings(
        max_examples=30,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(steps=actions)
    def check(steps: list[tuple]) -> None:
        play(harness, steps)

    check()
    assert harness.comparison.exact > 30
