"""Draft-model figures (issue 19 items 1 and 5): correctness with the tiny random-weight llamas.

A main llama drafted for by a llama of other weights (the same tokenizer), and by itself (every
guess right), greedy, against the main model decoding plainly: the tokens must be identical, and
the share of drafted tokens accepted says how well the draft guessed. Drafting is forced here
(verification passes costed as free, as on a GPU), because on a CPU the engine measures that a
pass over several tokens costs several steps and rightly stops drafting, which would leave
nothing checked; speed with a real pair needs a GPU and is not measured here.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from unittest import mock

from bench.default_model import WORKDIR
from inference import Engine, LoadedModel, SamplingParams, load_model
from inference.decoding.draft_length import PassTimes
from tests.tiny_models import EOS_ID, build_model

ASK = [{"role": "user", "content": "Tell me a story about a cat and a dog in Paris."}]
# The tiny llamas' end-of-sequence id banned, so every reply has --draft-tokens tokens.
BAN_EOS = {EOS_ID: -1e9}
HEADER = (
    "main model drafted for by",
    "tokens",
    "drafted / accepted",
    "forward passes",
    "identical to plain decoding",
)


def tiny_llama(seed: int) -> LoadedModel:
    folder = WORKDIR / f"tiny-llama-{seed}"
    if not (folder / "config.json").is_file():
        build_model("llama", Path(folder), seed=seed)
    return load_model(folder)


def rows(loaded: LoadedModel, args: argparse.Namespace) -> list[tuple[str, ...]]:
    """The section's table: HEADER, then one row per draft model. `loaded` is not used: the
    pair must share a tokenizer, so both are tiny llamas."""
    main = tiny_llama(0)
    plain = SamplingParams(max_tokens=args.draft_tokens, logit_bias=BAN_EOS, speculation="off")
    expected = Engine(main).generate(ASK, plain).token_ids
    figures: list[tuple[str, ...]] = [HEADER]
    for name, draft in (("another tiny llama (seed 1)", tiny_llama(1)), ("itself", main)):
        engine = Engine(main)
        engine.set_draft_model(draft)
        params = SamplingParams(
            max_tokens=args.draft_tokens, logit_bias=BAN_EOS, speculation="draft"
        )
        with mock.patch.object(PassTimes, "cost_ratio", lambda self, drafted: 1.0):
            result = engine.generate(ASK, params)
        stats = result.stats
        share = stats.accepted_tokens / stats.drafted_tokens if stats.drafted_tokens else 0.0
        figures.append(
            (
                name,
                str(len(result.token_ids)),
                f"{stats.drafted_tokens} / {stats.accepted_tokens} ({share:.0%})",
                str(stats.generated_tokens - stats.accepted_tokens),
                "yes" if result.token_ids == expected else "NO",
            )
        )
    print("draft-model figures measured", flush=True)
    return figures
