"""Prefill benchmark (issue 18 item 2): paced chunks against fixed 512-token chunks, and how fast
a cancel lands during a long prompt.

    .venv/bin/python bench/prefill.py [--model PATH] [--tokens N] [--runs N]

The model is the one `bench/engine.py` uses (SmolLM2 imported from its GGUF, else the tiny llama
fixture). Measured on one prompt of about `--tokens` tokens, runs alternating:

* prefill tokens/s of `Engine.generate` (chunks sized by `PrefillPacer`, the engine's pace
  already measured), from its first progress report to its last before decoding;
* the same for the model fed fixed 512-token chunks, as the engine did before the pacer;
* the seconds from setting `cancel` (from another thread, a second into the prefill) to
  `generate` returning.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mlx.core as mx
from mlx_lm.generate import generation_stream
from mlx_lm.models.cache import make_prompt_cache

from bench.engine import SYSTEM, default_model
from inference import Engine, LoadedModel, SamplingParams, load_model

FIXED_CHUNK = 512
ONE_TOKEN = SamplingParams(max_tokens=1, temperature=0.0)
SENTENCE = "The lighthouse keeper wrote down the weather, the ships and the gulls each hour. "


def prompt(loaded: LoadedModel, tokens: int) -> list[dict[str, str]]:
    text = SENTENCE
    while len(loaded.tokenizer.encode(text)) < tokens:
        text += SENTENCE
    return [SYSTEM, {"role": "user", "content": text}]


def paced_tps(engine: Engine, messages: list[dict[str, str]]) -> float:
    """Prefill tokens/s of one uncached request."""
    engine.clear_cache()
    times: list[tuple[float, int]] = []

    def on_progress(done: int, total: int) -> None:
        if done < total:  # `done == total` comes with the first generated token
            times.append((time.perf_counter(), done))

    engine.generate(messages, ONE_TOKEN, "bench", on_progress=on_progress)
    (start, first), (end, last) = times[0], times[-1]
    return (last - first) / (end - start)


def fixed_tps(loaded: LoadedModel, messages: list[dict[str, str]]) -> float:
    """Prefill tokens/s of the model fed fixed chunks (the engine before the pacer)."""
    ids = loaded.tokenizer.apply_chat_template(messages, add_generation_prompt=True)[:-1]
    caches = make_prompt_cache(loaded.model)
    start = time.perf_counter()
    for position in range(0, len(ids), FIXED_CHUNK):
        with mx.stream(generation_stream):
            loaded.model(mx.array(ids[position : position + FIXED_CHUNK])[None], cache=caches)
            mx.eval([c.state for c in caches])
        mx.clear_cache()
    return len(ids) / (time.perf_counter() - start)


def cancel_latency(engine: Engine, messages: list[dict[str, str]], after_s: float) -> float:
    """Seconds from setting `cancel` (from another thread, as the window does), `after_s` into
    an uncached request, to the request's return."""
    engine.clear_cache()
    cancel = threading.Event()
    set_at: list[float] = []

    def stop() -> None:
        set_at.append(time.perf_counter())
        cancel.set()

    timer = threading.Timer(after_s, stop)
    timer.start()
    result = engine.generate(messages, ONE_TOKEN, "bench", cancel=cancel)
    returned = time.perf_counter()
    timer.cancel()
    if result.finish_reason != "cancelled" or not set_at:
        return float("nan")  # the prompt was read before the cancel: make it longer
    return returned - set_at[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="an MLX model folder (default: SmolLM2)")
    parser.add_argument("--tokens", type=int, default=1800)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cancel-after", type=float, default=1.0, help="seconds into prefill")
    args = parser.parse_args()
    workdir = Path(tempfile.gettempdir()) / "branchwise-bench"
    loaded = load_model(args.model or default_model(workdir))
    messages = prompt(loaded, args.tokens)
    engine = Engine(loaded, 10**10, prefill_chunk_tokens=FIXED_CHUNK)
    paced_tps(engine, messages)  # warm up, and let the pacer measure this machine
    fixed_tps(loaded, messages)
    prompt_tokens = engine.count_prompt_tokens(messages)
    print(f"model {loaded.model_type}, prompt {prompt_tokens:,} tokens, {args.runs} runs")
    paced, fixed, latencies = [], [], []
    for run in range(args.runs):
        paced.append(paced_tps(engine, messages))
        fixed.append(fixed_tps(loaded, messages))
        latencies.append(cancel_latency(engine, messages, args.cancel_after))
        print(f"run {run + 1}: paced {paced[-1]:.1f} tok/s, fixed {fixed[-1]:.1f} tok/s, "
              f"cancel {latencies[-1]:.3f} s", flush=True)
    print(f"prefill, paced chunks:     {statistics.median(paced):8.1f} tok/s (median)")
    print(f"prefill, fixed {FIXED_CHUNK} chunks: {statistics.median(fixed):8.1f} tok/s (median)")
    print(f"paced / fixed:             {statistics.median(paced) / statistics.median(fixed):8.3f}")
    print(f"cancel latency:            {statistics.median(latencies):8.3f} s (median), "
          f"{max(latencies):.3f} s (worst)")


if __name__ == "__main__":
    main()
