"""CPU figures (issue 27): the model as it ran before (weights as stored, MLX's bundled
reference BLAS) against the fast form (float32 weights, OpenBLAS loaded before MLX).

The BLAS is chosen once per process, before MLX loads, so each side runs in a child process
(`BRANCHWISE_BLAS=bundled` keeps the bundled BLAS, see inference/cpu/fast_blas.py) that loads
the model, reads an attachment of about `--attachment-tokens` tokens (time to first token, prompt
tokens/s) and decodes `--cpu-decode-tokens` greedy tokens after a short question (decode
tokens/s), then reports its peak resident memory. Sides alternate run by run and the best run
of each is compared. `--cpu-every-form` adds the two mixed rows (each change alone); a
llama.cpp row on the same GGUF appears where `llama_cpp` happens to be importable.

The float32 side runs with the matrix layout its load measured and chose
(inference/cpu/layout_choice.py); two more rows force each layout (BRANCHWISE_CPU_LAYOUT) and a
ratio row compares the choice with the faster of the two, measured in the same run.

Where the environment chooses OpenBLAS's kernels (OPENBLAS_CORETYPE, with OPENBLAS_L2_SIZE: some
machines set them so that old OpenBLAS builds do not crash), one more row runs the fast form
with both unset in that child alone, as a person's machine would run it; the table says which
kernels each OpenBLAS row ran.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.conversation import STORY, SYSTEM
from bench.sections.prefill import SENTENCE, prompt
from inference import Engine, LoadedModel, SamplingParams, load_model
from inference.cpu.fast_blas import ENV, arithmetic
from inference.cpu.layout_choice import ENV as LAYOUT_ENV

REPO = Path(__file__).resolve().parents[2]
HEADER = (
    "side",
    "prompt tok/s",
    "decode tok/s",
    "TTFT, attachment",
    "peak memory",
    "weights",
    "BLAS",
)
# (row label, load policy, BLAS, matrix layout): the first is today's form, FAST the fast one.
TODAY = ("today: as stored, bundled BLAS", "never", "bundled", "auto")
FAST = ("float32, OpenBLAS, layout measured", "always", "fast", "auto")
MIXED = [
    ("as stored, OpenBLAS", "never", "fast", "auto"),
    ("float32, bundled BLAS", "always", "bundled", "auto"),
]
LAYOUTS = [
    ("float32, OpenBLAS, matrices as stored", "always", "fast", "stored"),
    ("float32, OpenBLAS, matrices transposed", "always", "fast", "transposed"),
]
OWN_KERNELS = ("float32, OpenBLAS choosing its kernels", "always", "own kernels", "auto")
KERNEL_VARIABLES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


@dataclass(frozen=True, slots=True)
class Side:
    """One side's figures (sent from its child process as JSON)."""

    prompt_tokens: int  # the attachment's prompt
    prompt_tps: float
    ttft_s: float
    decode_tps: float
    peak_bytes: int  # the child's peak resident memory
    weights: str  # their form and size
    blas: str  # the kernels the BLAS ran
    layout: str  # how the float32 matrices lay, and why


def measure(path: Path, policy: str, attachment_tokens: int, decode_tokens: int) -> Side:
    """One side's figures, in this process (whose BLAS was chosen when it started)."""
    loaded = load_model(path, cpu_float32=policy)
    engine = Engine(loaded)
    first = engine.generate(prompt(loaded, attachment_tokens), SamplingParams(max_tokens=1))
    eos = loaded.tokenizer.eos_token_ids
    params = SamplingParams(max_tokens=decode_tokens, logit_bias={i: -1e9 for i in eos})
    engine.generate([SYSTEM, STORY], SamplingParams(max_tokens=2))  # warm the decode path
    engine.clear_cache()
    reply = engine.generate([SYSTEM, STORY], params)
    return Side(
        prompt_tokens=first.stats.prompt_tokens,
        prompt_tps=first.stats.prefill_tps,
        ttft_s=first.stats.ttft_s,
        decode_tps=reply.stats.decode_tps,
        peak_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        weights=f"{loaded.weights_form}, {loaded.weights_bytes / 1e6:.0f} MB",
        blas=arithmetic(),
        layout=loaded.matrix_layout.describe(),
    )


def run_side(path: Path, policy: str, blas: str, layout: str, args: argparse.Namespace) -> Side:
    env = {**os.environ, "PYTHONPATH": str(REPO), LAYOUT_ENV: layout}
    if blas == "bundled":
        env[ENV] = "bundled"
    else:
        env.pop(ENV, None)
    if blas == "own kernels":
        for name in KERNEL_VARIABLES:
            env.pop(name, None)
    code = (
        "import dataclasses, json, sys; from bench.sections.cpu import measure; "
        "print(json.dumps(dataclasses.asdict(measure(*sys.argv[1:3], *map(int, sys.argv[3:])))))"
    )
    command = [
        sys.executable,
        "-c",
        code,
        str(path),
        policy,
        str(args.attachment_tokens),
        str(args.cpu_decode_tokens),
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the {policy}/{blas} side failed:\n{done.stderr[-2000:]}")
    return Side(**json.loads(done.stdout.strip().splitlines()[-1]))


def rows(loaded: LoadedModel, args: argparse.Namespace) -> list[tuple[str, ...]]:
    chosen = any(os.environ.get(name) for name in KERNEL_VARIABLES)
    sides = [
        TODAY,
        *(MIXED if args.cpu_every_form else []),
        FAST,
        *LAYOUTS,
        *([OWN_KERNELS] * chosen),
    ]
    best: dict[str, Side] = {}
    for _ in range(args.runs):
        for label, policy, blas, layout in sides:
            figures = run_side(loaded.path, policy, blas, layout, args)
            kept = best.setdefault(label, figures)
            best[label] = replace(
                kept,
                prompt_tps=max(kept.prompt_tps, figures.prompt_tps),
                decode_tps=max(kept.decode_tps, figures.decode_tps),
                ttft_s=min(kept.ttft_s, figures.ttft_s),
            )
    table: list[tuple[str, ...]] = [HEADER, *(_row(s[0], best[s[0]]) for s in sides)]
    today = best[TODAY[0]]
    table.append(_ratios("fast over today (goal: ≥10x prompt, ≥2x decode)", best[FAST[0]], today))
    faster = max((best[s[0]] for s in LAYOUTS), key=lambda side: side.decode_tps)
    table.append(
        _ratios(
            "measured layout over the faster forced one (goal ≥0.95x decode)", best[FAST[0]], faster
        )
    )
    if chosen:
        table.append(_ratios("its own kernels over today", best[OWN_KERNELS[0]], today))
    reference = _llama_cpp_row(args)
    if reference is not None:
        table.append(reference)
    return table


def _ratios(label: str, fast: Side, today: Side) -> tuple[str, ...]:
    return (
        label,
        f"{fast.prompt_tps / today.prompt_tps:.2f}x",
        f"{fast.decode_tps / today.decode_tps:.2f}x",
        f"{today.ttft_s / fast.ttft_s:.1f}x sooner",
        f"{fast.peak_bytes / today.peak_bytes:.1f}x",
        "",
        "",
    )


def _row(label: str, figures: Side) -> tuple[str, ...]:
    return (
        label,
        f"{figures.prompt_tps:.0f} ({figures.prompt_tokens} tokens)",
        f"{figures.decode_tps:.1f}",
        f"{figures.ttft_s:.1f} s",
        f"{figures.peak_bytes / 2**20:.0f} MiB",
        f"{figures.weights}; {figures.layout or 'no float32 matrix'}",
        figures.blas,
    )


def _llama_cpp_row(args: argparse.Namespace) -> tuple[str, ...] | None:
    """llama.cpp on the embedded GGUF, as a reference (not a dependency: only when installed)."""
    if importlib.util.find_spec("llama_cpp") is None:
        return None
    from app.library.embedded_model import embedded_gguf_path

    gguf = embedded_gguf_path()
    if gguf is None:
        return None
    # Imported by name: an optional reference, not installed with Branchwise (nor typed).
    llama: Any = importlib.import_module("llama_cpp").Llama
    llm: Any = llama(str(gguf), n_ctx=args.attachment_tokens + 512, verbose=False)
    text = SENTENCE * max(1, args.attachment_tokens // len(llm.tokenize(SENTENCE.encode())))
    prompt = llm.tokenize(text.encode())
    start = time.perf_counter()
    llm.eval(prompt)
    ttft = time.perf_counter() - start
    llm.reset()
    llm.eval(llm.tokenize(STORY["content"].encode()))
    start = time.perf_counter()
    for _ in range(args.cpu_decode_tokens):
        llm.eval([llm.sample(temp=0.0)])
    decode = args.cpu_decode_tokens / (time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return (
        "llama.cpp on the GGUF (reference)",
        f"{len(prompt) / ttft:.0f}",
        f"{decode:.1f}",
        f"{ttft:.1f} s",
        f"{peak / 2**20:.0f} MiB (bench process)",
        gguf.name,
        "ggml's own",
    )
