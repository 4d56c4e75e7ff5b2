"""Regenerate ×N benchmark (issue 15 item 5): 4 variants in one batch against 4 regenerations.

    .venv/bin/python bench/variants.py [--model PATH] [--tokens N] [--runs N] [--variants N]

Without --model it uses the same default model as bench/engine.py (SmolLM2 imported from its
GGUF, or the tiny llama fixture). Each run starts from a fresh engine on the same sampled
settings (end-of-sequence banned, so every reply has exactly --tokens tokens):

* wall time of `generate_variants` with N seeds over N sequential `generate` calls with the same
  seeds (the first computes the prompt, the others reuse it, as regenerations do);
* prompt tokens the model computed: the shared prefix once, and none beyond it (counted by
  wrapping the model: every call with more than one token per row is prompt work).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `inference` importable from the repo root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cli import description, positive_int
from bench.default_model import default_model
from bench.table import table
from inference import Engine, GenerationResult, LoadedModel, SamplingParams, load_model

MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant. " * 8},
    {"role": "user", "content": "Write a long story about a lighthouse keeper and a storm."},
]


class CountingModel:
    """The model, counting the prompt tokens fed to it (rows times tokens, for calls that feed
    more than one token per row; a decode step feeds one)."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self.prompt_tokens = 0

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        rows, length = inputs.shape[0], inputs.shape[1]
        if length > 1:
            self.prompt_tokens += rows * length
        return self._model(inputs, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


@dataclass(frozen=True, slots=True)
class Run:
    """One side's run: its wall time, the prompt tokens the model computed, the replies."""

    seconds: float
    prompt_tokens: int
    results: list[GenerationResult]


def run(loaded: LoadedModel, params: SamplingParams, seeds: list[int], batch: bool) -> Run:
    counting = CountingModel(loaded.model)
    engine = Engine(replace(loaded, model=counting))
    started = time.perf_counter()
    if batch:
        results = engine.generate_variants(MESSAGES, params, seeds=seeds)
    else:
        results = [engine.generate(MESSAGES, replace(params, seed=s)) for s in seeds]
    return Run(time.perf_counter() - started, counting.prompt_tokens, results)


def main() -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--model", type=Path, help="an MLX model folder (default: SmolLM2)")
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--runs", type=positive_int, default=3)
    parser.add_argument("--variants", type=int, default=4)
    args = parser.parse_args()

    loaded = load_model(args.model or default_model())
    eos = {t: -1e9 for t in loaded.tokenizer.eos_token_ids}
    params = SamplingParams(temperature=0.8, top_p=0.95, max_tokens=args.tokens, logit_bias=eos)
    seeds = list(range(1, args.variants + 1))
    run(loaded, params, seeds[:1], batch=True)  # warm-up: kernels, the template
    batches: list[Run] = []
    sequentials: list[Run] = []
    for _ in range(args.runs):
        batches.append(run(loaded, params, seeds, batch=True))
        sequentials.append(run(loaded, params, seeds, batch=False))
    batch, sequential = batches[-1], sequentials[-1]  # --runs is 1 or more
    batch_prompt, sequential_prompt = batch.prompt_tokens, sequential.prompt_tokens
    same = [b.token_ids for b in batch.results] == [s.token_ids for s in sequential.results]
    shared = batch.results[0].stats.prefill_tokens - 1  # the last prompt token starts decoding
    batch_s = statistics.median(r.seconds for r in batches)
    sequential_s = statistics.median(r.seconds for r in sequentials)
    print(
        f"model: {loaded.model_id} ({loaded.model_type}); {args.variants} variants of "
        f"{args.tokens} tokens; median of {args.runs} runs; variants equal the regenerations: "
        f"{same}"
    )
    print(
        table(
            [
                (
                    "measure",
                    "variants (one batch)",
                    "sequential regenerations (the baseline)",
                    "ratio batch / sequential",
                ),
                (
                    "wall time (s)",
                    f"{batch_s:.3f}",
                    f"{sequential_s:.3f}",
                    f"{batch_s / sequential_s:.3f}",
                ),
                ("prompt tokens computed", str(batch_prompt), str(sequential_prompt), ""),
                (
                    "  of which beyond the shared prefix",
                    str(batch_prompt - shared),
                    str(sequential_prompt - shared),
                    "target 0",
                ),
            ]
        )
    )


if __name__ == "__main__":
    main()
