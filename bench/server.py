"""Local server benchmark (issue 14 item 8): the server against the in-process engine, in one run.

    .venv/bin/python bench/server.py [--model PATH] [--decode-tokens N] [--runs N]

Without --model it uses the same model as bench/engine.py (SmolLM2-135M imported from its GGUF,
or the tiny llama fixture). One inference worker serves both sides, as in the app:

* decode tokens/s streamed over HTTP by the `openai` client (first to last token, at the client)
  over the engine's own decode tokens/s for the same request run in-process on the worker
  (alternating runs, median of the neighbouring ratios);
* time to first token over HTTP of a follow-up whose history the server has cached (the previous
  turn) over the same follow-up from an empty cache;
* 4 clients at once: all complete, each with exactly the reply it gets alone (greedy).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import openai
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletionMessageParam
from PySide6.QtCore import Qt

from app.generation.worker import InferenceWorker
from app.generation.worker_engine import EngineLike
from app.generation.worker_events import ModelLoaded
from app.server.config import ServerConfig
from app.server.openai_server import LocalServer
from app.server.served_requests import ServedGenerations
from bench.cli import description, positive_int
from bench.conversation import STORY, SYSTEM, TURNS, ask
from bench.default_model import default_model

CLIENTS = 4


def on_worker[T](worker: InferenceWorker, fn: Callable[[EngineLike], T]) -> T:
    """Run `fn(engine)` on the worker thread (after what is queued) and wait for its result.
    `call`'s own callbacks need a Qt loop, which this script does not run."""
    done = threading.Event()
    box: list[T] = []

    def job(engine: EngineLike | None) -> None:
        try:
            if engine is None:
                raise RuntimeError("the worker holds no model")
            box.append(fn(engine))
        finally:
            done.set()

    worker.call(job)
    done.wait(600)
    if not box:
        raise SystemExit("a benchmark step failed on the worker (see the log)")
    return box[0]


def load(model: Path) -> tuple[InferenceWorker, ModelLoaded]:
    worker = InferenceWorker()
    loaded = threading.Event()
    infos: list[ModelLoaded] = []
    worker.modelLoaded.connect(
        lambda i: (infos.append(i), loaded.set()), Qt.ConnectionType.DirectConnection
    )
    worker.loadFailed.connect(lambda _m: loaded.set(), Qt.ConnectionType.DirectConnection)
    worker.load_model(model)
    loaded.wait(600)
    if not infos:
        raise SystemExit(f"the model at {model} failed to load")
    return worker, infos[0]


@dataclass(frozen=True, slots=True)
class Greedy:
    """A greedy request's settings: the reply's length, and the logit bias sent with it."""

    max_tokens: int
    logit_bias: Mapping[str, float]  # token id (a JSON key: a string) -> added to its logit


@dataclass(frozen=True, slots=True)
class Streamed:
    """One streamed reply: its text, time to first token, client-side decode tok/s, usage."""

    text: str
    ttft: float
    decode: float
    usage: CompletionUsage


def chat_messages(messages: Sequence[Mapping[str, str]]) -> list[ChatCompletionMessageParam]:
    """bench.conversation's messages (system, user and assistant turns of text) as the
    `openai` client types them."""
    typed: list[ChatCompletionMessageParam] = []
    for message in messages:
        role, content = message["role"], message["content"]
        if role == "system":
            typed.append({"role": "system", "content": content})
        elif role == "user":
            typed.append({"role": "user", "content": content})
        elif role == "assistant":
            typed.append({"role": "assistant", "content": content})
        else:
            raise ValueError(f"the server bench sends system, user and assistant turns, not {role}")
    return typed


async def stream_timed(
    client: openai.AsyncOpenAI, model: str, messages: Sequence[Mapping[str, str]], params: Greedy
) -> Streamed:
    """Stream one reply: its text, time to first token, client-side decode tok/s and usage."""
    typed = chat_messages(messages)
    started = time.perf_counter()
    stream = await client.chat.completions.create(
        model=model,
        messages=typed,
        stream=True,
        stream_options={"include_usage": True},
        temperature=0,
        max_tokens=params.max_tokens,
        extra_body={"logit_bias": dict(params.logit_bias)},
    )
    first: float | None = None
    last: float | None = None
    pieces: list[str] = []
    usage: CompletionUsage | None = None
    async for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        if chunk.choices and chunk.choices[0].delta.content:
            last = time.perf_counter()
            first = first or last
            pieces.append(chunk.choices[0].delta.content)
    if usage is None:
        raise RuntimeError("the server's stream ended without its usage")
    if first is None or last is None:
        raise RuntimeError("the server streamed no text")
    tokens = usage.completion_tokens
    # Token updates are coalesced (60 a second), so the first chunk may hold a few tokens.
    decode = (tokens - 1) / (last - first) if last > first else 0.0
    return Streamed("".join(pieces), first - started, decode, usage)


@dataclass(frozen=True, slots=True)
class Figures:
    """What the bench prints: each side's figure and the ratio of the two."""

    served_tps: float
    local_tps: float
    decode_ratio: float
    follow_prompt: int  # the follow-up's prompt tokens
    follow_cached: int  # of those, read from the cache
    cached_ttft: float
    scratch_ttft: float
    completed: int  # of CLIENTS at once
    correct: int  # each the reply it gets alone


async def bench(worker: InferenceWorker, info: ModelLoaded, tokens: int, runs: int) -> Figures:
    from inference import SamplingParams

    eos = on_worker(worker, lambda e: sorted(e.model.tokenizer.eos_token_ids))
    no_eos = {i: -1e9 for i in eos}
    model = info.model_id
    generations = ServedGenerations(worker, info, max_pending=CLIENTS * 2)
    server = LocalServer(generations, ServerConfig(port=0))
    await server.start()
    client = openai.AsyncOpenAI(base_url=server.url, api_key="unused", max_retries=0, timeout=600)
    story = [SYSTEM, STORY]
    greedy = Greedy(tokens, {str(i): bias for i, bias in no_eos.items()})
    local_params = SamplingParams(max_tokens=tokens, logit_bias=no_eos)
    try:
        served_tps, local_tps = [], []
        for _ in range(runs):
            served_tps.append((await stream_timed(client, model, story, greedy)).decode)
            local_tps.append(
                on_worker(worker, lambda e: e.generate(story, local_params).stats.decode_tps)
            )
        ratios = [s / x for s, x in zip(served_tps, local_tps, strict=True)]

        history = [SYSTEM]
        for question, answer in TURNS * 2:
            history += [ask(question), {"role": "assistant", "content": answer}]
        previous = [*history, ask("Summarise our chat in one line.")]
        short = replace(greedy, max_tokens=8)
        cached_runs, scratch_runs = [], []
        for _ in range(runs):
            on_worker(worker, lambda e: e.clear_cache())  # only the previous turn is cached
            reply = await stream_timed(client, model, previous, short)
            follow = [
                *previous,
                {"role": "assistant", "content": reply.text},
                ask("And in one word?"),
            ]
            cached_runs.append(await stream_timed(client, model, follow, short))
            on_worker(worker, lambda e: e.clear_cache())
            scratch_runs.append(await stream_timed(client, model, follow, short))
        cached_ttft = statistics.median(r.ttft for r in cached_runs)
        scratch_ttft = statistics.median(r.ttft for r in scratch_runs)

        prompts = [[SYSTEM, ask(q)] for q, _ in TURNS[:CLIENTS]]
        alone = [(await stream_timed(client, model, p, short)).text for p in prompts]
        together = await asyncio.gather(*(stream_timed(client, model, p, short) for p in prompts))
        correct = sum(r.text == a for r, a in zip(together, alone, strict=True))
    finally:
        await client.close()
        await server.stop()
        generations.close()
    follow_usage = cached_runs[-1].usage  # --runs is 1 or more
    details = follow_usage.prompt_tokens_details
    if details is None or details.cached_tokens is None:
        raise RuntimeError("the server did not say how many of the prompt's tokens were cached")
    return Figures(
        served_tps=statistics.median(served_tps),
        local_tps=statistics.median(local_tps),
        decode_ratio=statistics.median(ratios),
        follow_prompt=follow_usage.prompt_tokens,
        follow_cached=details.cached_tokens,
        cached_ttft=cached_ttft,
        scratch_ttft=scratch_ttft,
        completed=len(together),
        correct=correct,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--model", type=Path, help="an MLX model folder (default: SmolLM2)")
    parser.add_argument("--decode-tokens", type=int, default=64)
    parser.add_argument("--runs", type=positive_int, default=3)
    args = parser.parse_args()
    model = args.model or default_model()
    worker, info = load(model)
    print(f"model: {info.model_id} ({info.model_type})", flush=True)
    try:
        r = asyncio.run(bench(worker, info, args.decode_tokens, args.runs))
    finally:
        worker.shutdown()
    print(
        f"decode over HTTP {r.served_tps:.1f} tok/s, in-process {r.local_tps:.1f} tok/s: "
        f"ratio over HTTP / in-process {r.decode_ratio:.3f} (target >= 0.95)"
    )
    print(
        f"follow-up TTFT over HTTP ({r.follow_prompt} prompt tokens, {r.follow_cached} "
        f"cached): {r.cached_ttft * 1000:.0f} ms cached vs {r.scratch_ttft * 1000:.0f} ms "
        f"from scratch: ratio cached / from scratch {r.cached_ttft / r.scratch_ttft:.2f}"
    )
    print(f"{CLIENTS} concurrent clients: {r.completed} completed, {r.correct} correct")


if __name__ == "__main__":
    main()
