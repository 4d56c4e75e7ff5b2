"""Prefill figures (issue 18 item 2): the engine's paced chunks (about a quarter second each,
sized by `PrefillPacer` from the measured speed) against fixed 512-token chunks, as the engine
fed prompts before, and how long a cancel takes to act during a long prompt with each.

Runs alternate (paced, fixed, then a cancel with each) on one prompt of about `--prefill-tokens`
tokens, nothing cached, and the best of the runs is compared: a run slowed by another process
says nothing about the code, a fast one does. A cancel is set from another thread, as the window
sets it, `--cancel-after` seconds into the prefill; its latency is the time from then to the
prefill's return (median and worst of the runs).
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable

import mlx.core as mx
from mlx_lm.generate import generation_stream
from mlx_lm.models.cache import make_prompt_cache

from bench.conversation import SYSTEM
from inference import Engine, LoadedModel, SamplingParams

FIXED_CHUNK = 512
ONE_TOKEN = SamplingParams(max_tokens=1, temperature=0.0)
SENTENCE = "The lighthouse keeper wrote down the weather, the ships and the gulls each hour. "
HEADER = ("measure", "paced chunks", f"fixed {FIXED_CHUNK}-token chunks", "ratio", "target")


def prompt(loaded: LoadedModel, tokens: int) -> list[dict[str, str]]:
    text = SENTENCE
    while len(loaded.tokenizer.encode(text)) < tokens:
        text += SENTENCE
    return [SYSTEM, {"role": "user", "content": text}]


def paced_tps(engine: Engine, messages: list[dict[str, str]]) -> float:
    """Prefill tokens/s of one uncached request, from before its first chunk to after its
    last (the first generated token is not part of it)."""
    engine.clear_cache()
    times: list[tuple[float, int]] = []

    def on_progress(done: int, total: int) -> None:
        if done < total:  # `done == total` comes with the first generated token
            times.append((time.perf_counter(), done))

    engine.generate(messages, ONE_TOKEN, "bench", on_progress=on_progress)
    (start, first), (end, last) = times[0], times[-1]
    return (last - first) / (end - start)


def fixed_prefill(loaded: LoadedModel, ids: list[int], cancel: threading.Event) -> bool:
    """Feed `ids` to a fresh cache in fixed chunks, checking `cancel` between chunks as the
    engine did before the pacer; False when cancelled."""
    caches = make_prompt_cache(loaded.model)
    for position in range(0, len(ids), FIXED_CHUNK):
        if cancel.is_set():
            return False
        with mx.stream(generation_stream):
            loaded.model(mx.array(ids[position : position + FIXED_CHUNK])[None], cache=caches)
            mx.eval([c.state for c in caches])
        mx.clear_cache()
    return not cancel.is_set()


def fixed_tps(loaded: LoadedModel, ids: list[int]) -> float:
    started = time.perf_counter()
    fixed_prefill(loaded, ids, threading.Event())
    return len(ids) / (time.perf_counter() - started)


def cancel_latency(run: Callable[[threading.Event], bool], after_s: float) -> float:
    """Seconds from setting the event `run` checks (from another thread, `after_s` into the
    run) to `run` returning; NaN when it finished before the cancel (make the prompt longer)."""
    cancel = threading.Event()
    set_at: list[float] = []

    def stop() -> None:
        set_at.append(time.perf_counter())
        cancel.set()

    timer = threading.Timer(after_s, stop)
    timer.start()
    cancelled = not run(cancel)
    returned = time.perf_counter()
    timer.cancel()
    return returned - set_at[0] if cancelled and set_at else float("nan")


def rows(loaded: LoadedModel, args: argparse.Namespace) -> list[tuple[str, ...]]:
    """The section's table: HEADER, then one row per figure."""
    messages = prompt(loaded, args.prefill_tokens)
    engine = Engine(loaded, 10**10, prefill_chunk_tokens=FIXED_CHUNK)
    ids = loaded.tokenizer.apply_chat_template(messages, add_generation_prompt=True)[:-1]

    def engine_run(cancel: threading.Event) -> bool:
        engine.clear_cache()
        return engine.generate(messages, ONE_TOKEN, "bench", cancel=cancel).finish_reason != (
            "cancelled"
        )

    paced_tps(engine, messages)  # warm up, and let the pacer measure this machine
    paced, fixed, paced_cancel, fixed_cancel = [], [], [], []
    for run in range(args.runs):
        paced.append(paced_tps(engine, messages))
        fixed.append(fixed_tps(loaded, ids))
        paced_cancel.append(cancel_latency(engine_run, args.cancel_after))
        fixed_cancel.append(
            cancel_latency(lambda c: fixed_prefill(loaded, ids, c), args.cancel_after)
        )
        print(
            f"prefill run {run + 1}: paced {paced[-1]:.1f} tok/s, fixed {fixed[-1]:.1f} tok/s, "
            f"cancel paced {paced_cancel[-1]:.2f} s, fixed {fixed_cancel[-1]:.2f} s",
            flush=True,
        )
    return [
        HEADER,
        (
            f"prefill tokens/s, {len(ids):,}-token prompt (best of {args.runs})",
            f"{max(paced):.1f}",
            f"{max(fixed):.1f}",
            f"{max(paced) / max(fixed):.3f}",
            ">= 0.95",
        ),
        (
            f"cancel {args.cancel_after:g} s into the prefill: seconds to act (median / worst)",
            f"{statistics.median(paced_cancel):.2f} / {max(paced_cancel):.2f}",
            f"{statistics.median(fixed_cancel):.2f} / {max(fixed_cancel):.2f}",
            f"{max(paced_cancel) / max(fixed_cancel):.3f}",
            "paced <= 0.5 s",
        ),
    ]
