"""Transparency on the float32 form: every cache kind, loaded from 4-bit weights and turned into
float32, still gives token for token what `mlx_lm.stream_generate` gives on the same weights,
through the same user actions as tests/test_engine_transparency.py (one fixed sequence with
each action, then sequences Hypothesis draws)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from inference import SamplingParams
from tests.inference.engine.test_engine_transparency import (
    MAX_TOKENS,
    Harness,
    play,
    play_drawn,
    tools_harness,
)
from tests.tiny_models import KINDS, NO_EOS

pytestmark = pytest.mark.usefixtures("free_drafts")

GREEDY = SamplingParams(max_tokens=MAX_TOKENS)
SEEDED = SamplingParams(max_tokens=MAX_TOKENS, temperature=0.8, seed=7, logit_bias=NO_EOS)
EVERY_ACTION = [
    ("send", "a", "tell me a story about Paris", GREEDY),
    ("regenerate", "a", SEEDED),
    ("send", "a", "the cat sat on a mat", dataclasses.replace(GREEDY, speculation="off")),
    ("edit", "a", 0, "code about the mat", GREEDY),
    ("switch", "a", 0, "told me a story", SEEDED),
    ("cancel_prefill", "b", "the cat told me a story about code", GREEDY),
    ("cancel_decode", "b", "a mat", GREEDY),
    ("budget", 30_000),
    ("restart",),
    ("send", "a", "about Paris", GREEDY),
    ("overflow", "a", "truncate_middle", GREEDY),
    ("overflow", "b", "rolling", SEEDED),
]


@pytest.fixture(scope="module")
def harnesses(
    quantized_models_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Harness]]:
    made = {}
    root = tmp_path_factory.mktemp("float32-tools")
    for kind in KINDS:
        made[kind] = tools_harness(
            quantized_models_dir / kind,
            root / kind,
            quantized_models_dir.parent / f"float32-caches-{kind}",
            cpu_float32="always",
        )
        assert made[kind].loaded.weights_form.startswith("float32 (from ")
    yield made


@pytest.mark.parametrize("kind", KINDS)
def test_every_action_on_float32_weights_matches_from_scratch_generation(
    harnesses: dict[str, Harness], kind: str
) -> None:
    harness = harnesses[kind]
    play(harness, EVERY_ACTION)
    assert harness.restarts == 1 and harness.overflows == 2
    play_drawn(harness, 10)
    assert len(harness.comparison.near_ties) <= harness.generations // 20
