"""From-scratch mlx-lm generation, the yardstick for the engine's transparency tests.

The engine must produce exactly what `mlx_lm.stream_generate` produces for the same rendered
prompt from an empty cache. Chunked and whole prefill sum in different orders, so a divergence is
accepted only after a position where the from-scratch top-2 log-probability margin is below
NEAR_TIE (the logsumexp shift does not change the margin between two logits).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

import mlx.core as mx
import mlx_lm
from mlx_lm.sample_utils import make_logits_processors, make_sampler

from inference import LoadedModel, SamplingParams

NEAR_TIE = 1e-4


@dataclass(frozen=True)
class Reference:
    tokens: tuple[int, ...]
    margins: tuple[float, ...]  # top-2 margin of the distribution each token was drawn from


@dataclass
class Comparison:
    """Counts over a test module: exact matches and divergences excused by a near-tie."""

    exact: int = 0
    near_ties: list[str] = field(default_factory=list)


def reference(
    loaded: LoadedModel, ids: list[int], params: SamplingParams, max_tokens: int
) -> Reference:
    if params.seed is not None:
        mx.random.seed(params.seed)
    # Built here from mlx-lm directly, not by SamplingParams, so the yardstick does not share
    # the code it measures.
    sampler = make_sampler(
        temp=params.temperature, top_p=params.top_p, min_p=params.min_p, top_k=params.top_k
    )
    penalty = None if params.repetition_penalty == 1.0 else params.repetition_penalty
    processors = make_logits_processors(
        logit_bias=dict(params.logit_bias), repetition_penalty=penalty
    )
    tokens, margins = [], []
    for response in mlx_lm.stream_generate(
        loaded.model,
        loaded.tokenizer,
        ids,
        max_tokens=max_tokens,
        sampler=sampler,
        logits_processors=processors,
    ):
        top2 = mx.sort(response.logprobs)[-2:]
        tokens.append(response.token)
        margins.append((top2[1] - top2[0]).item())
    return Reference(tuple(tokens), tuple(margins))


def check_tokens(
    got: tuple[int, ...], ref: Reference, stats: Comparison, label: str, complete: bool = True
) -> None:
    """Assert `got` equals `ref.tokens` (a prefix of it when not `complete`, i.e. cancelled),
    or diverges only after a near-tie."""
    for i, token in enumerate(got):
        assert i < len(ref.tokens), f"{label}: {len(got)} tokens, reference {len(ref.tokens)}"
        if token != ref.tokens[i]:
            tie = min(ref.margins[: i + 1])
            assert tie < NEAR_TIE, (
                f"{label}: token {i} is {token}, reference {ref.tokens[i]} "
                f"(smallest top-2 margin so far {tie:.2e})\n got {got}\n ref {ref.tokens}"
            )
            stats.near_ties.append(f"{label}: at token {i}, margin {tie:.2e}")
            return
    if complete:
        assert len(got) == len(ref.tokens), f"{label}: got {got}, reference {ref.tokens}"
    stats.exact += 1


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages as HF chat templates take them: a call's arguments decoded from the JSON string
    OpenAI's shape holds, and a reply that only calls given empty text (written here, not
    taken from the engine, so the reference does not share the code it checks)."""
    plain = copy.deepcopy(messages)
    for message in plain:
        for call in message.get("tool_calls") or []:
            arguments = call["function"]["arguments"]
            if isinstance(arguments, str):
                call["function"]["arguments"] = json.loads(arguments)
        if message.get("content") is None:
            message["content"] = ""
    return plain
