"""Engine benchmark: the engine's figures, each measured side by side in one run.

    .venv/bin/python bench/engine.py [--model PATH] [--only SECTION[,SECTION]] [--runs N] ...

Without --model it uses SmolLM2-135M-Instruct imported from the GGUF embedded with the app
(bench/default_model.py). Each section alternates its two sides run by run and prints a table
of ratios; the sections (bench/sections/):

* caching: the engine against raw mlx-lm from an empty cache (decode speed, follow-ups,
  branches, sibling bytes, restore, after a restart, boundary work);
* prefill: paced prefill chunks against fixed 512-token chunks, throughput and how long a
  cancel takes to act;
* lookup: prompt-lookup speculation against plain decoding on a rewrite and an open question,
  tokens identical;
* draft: draft-model speculation with the tiny llamas, tokens identical, share accepted;
* passes: a forward pass over 1, 2, 4, 8 and 16 tokens against a one-token pass;
* tools: continuing after a tool result against a plain follow-up (prompt tokens computed,
  time to first token).
* cpu: today's form (weights as stored, MLX's bundled BLAS) against float32 weights on OpenBLAS,
  each side in its own child process (the BLAS is chosen before MLX loads): prompt and decode
  tokens/s, time to first token after an attachment, peak memory.
* vision: a follow-up in a chat with an image against mlx-vlm from scratch, encoder calls per
  later turn, memory per image (a random Qwen2.5-VL, or --vision-model).
* knowledge: a follow-up in a chat whose every turn read knowledge excerpts (CPython's reference
  topics, indexed by the app's own index) against mlx-lm from scratch, with and without the
  follow-up's own retrieval.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cli import description, positive_int
from bench.default_model import default_model
from bench.sections import (
    caching,
    cpu,
    draft,
    knowledge,
    lookup,
    passes,
    prefill,
    tools,
    vision,
)
from bench.table import table
from inference import LoadedModel, load_model

Section = Callable[[LoadedModel, argparse.Namespace], list[tuple[str, ...]]]
SECTIONS: dict[str, Section] = {
    "caching": caching.rows,
    "prefill": prefill.rows,
    "lookup": lookup.rows,
    "draft": draft.rows,
    "passes": passes.rows,
    "tools": tools.rows,
    "cpu": cpu.rows,
    "vision": vision.rows,
    "knowledge": knowledge.rows,
}


def sections(text: str) -> list[str]:
    """The names in a comma-separated --only value, each checked."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in SECTIONS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown section {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(SECTIONS)}"
        )
    return names


def parser() -> argparse.ArgumentParser:
    parse = argparse.ArgumentParser(description=description(__doc__))
    parse.add_argument("--model", type=Path, help="an MLX model folder (default: SmolLM2)")
    parse.add_argument(
        "--only",
        type=sections,
        default=list(SECTIONS),
        help=f"sections to run, comma-separated: {','.join(SECTIONS)}",
    )
    parse.add_argument("--runs", type=positive_int, default=3, help="alternating runs of each side")
    parse.add_argument("--decode-tokens", type=int, default=24, help="caching: decode length")
    parse.add_argument("--prefill-tokens", type=int, default=1800, help="prefill: prompt size")
    parse.add_argument(
        "--cancel-after",
        type=float,
        default=1.0,
        help="prefill: seconds into the prompt a cancel is set",
    )
    parse.add_argument("--rewrite-tokens", type=int, default=300, help="lookup: rewrite length")
    parse.add_argument(
        "--question-tokens", type=int, default=100, help="lookup: open question's reply length"
    )
    parse.add_argument("--draft-tokens", type=int, default=48, help="draft: reply length")
    parse.add_argument("--pass-repeats", type=int, default=5, help="passes: best of this many")
    parse.add_argument(
        "--tool-history-tokens",
        type=int,
        default=600,
        help="tools: the chat's length before the tool call",
    )
    parse.add_argument(
        "--attachment-tokens",
        type=int,
        default=2000,
        help="cpu: the attachment read before the first token",
    )
    parse.add_argument("--cpu-decode-tokens", type=int, default=48, help="cpu: reply length")
    parse.add_argument(
        "--vision-model",
        type=Path,
        help="vision: an MLX vision model folder (default: a random Qwen2.5-VL)",
    )
    parse.add_argument(
        "--knowledge-budget",
        type=positive_int,
        default=512,
        help="knowledge: the tokens of excerpts each turn may take",
    )
    parse.add_argument(
        "--knowledge-turns",
        type=positive_int,
        default=10,
        help="knowledge: the turns (each reading knowledge) before the follow-up",
    )
    parse.add_argument(
        "--cpu-every-form",
        action="store_true",
        help="cpu: also float32 on the bundled BLAS and stored weights on OpenBLAS",
    )
    return parse


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    loaded = load_model(args.model or default_model())
    print(
        f"model: {loaded.model_id} ({loaded.model_type}, {loaded.weights_bytes / 1e6:.0f} MB)",
        flush=True,
    )
    for name in args.only:
        figures = SECTIONS[name](loaded, args)
        print(f"\n## {name}\n\n{table(figures)}\n", flush=True)


if __name__ == "__main__":
    main()
