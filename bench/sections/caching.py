"""Caching figures (issue 3 item 7): the engine against raw mlx-lm from an empty cache.

* decode tokens/s of `Engine.generate` over raw `mlx_lm.stream_generate` (alternating runs);
* a follow-up turn after about 250 and 500 history tokens: the engine's time to first token
  (the history cached by the previous turn) over mlx-lm's from an empty cache;
* the prompt tokens prefilled by a regenerate and by a switch back to a stored branch;
* the bytes 8 sibling replies (50 tokens) of one 2,000-token chat hold, over one 2,050-token
  stack, and the time to restore a 2,000-token branch into contiguous caches over the time its
  prefill takes (KV of the model's geometry filled synthetically: neither depends on values);
* after a restart (a new engine on the same cache folder), the time to first token of a
  follow-up after 1,000 history tokens over mlx-lm's from an empty cache, tokens identical;
* the boundary work of one request in a 400-message chat on the tiny qwen3_5 model.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import mlx.core as mx
from mlx_lm.generate import stream_generate
from mlx_lm.models.cache import KVCache

from bench.conversation import STORY, SYSTEM, TURNS, ask, history
from bench.default_model import WORKDIR
from inference import Engine, GenerationStats, LoadedModel, SamplingParams, load_model
from inference.cache.branch_cache import BranchCache
from inference.cache.stack import CacheStack
from inference.prompt.chat_prompt import generation_suffix, message_boundaries, render_prompt

HEADER = ("measure", "engine", "mlx-lm from scratch", "ratio", "target")


def raw_run(
    loaded: LoadedModel, messages: list[dict[str, str]], max_tokens: int
) -> tuple[float, float, int]:
    """mlx-lm from an empty cache: (time to first token, decode tokens/s, prompt tokens)."""
    ids = loaded.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    started = time.perf_counter()
    stamps = [
        time.perf_counter()
        for _ in stream_generate(loaded.model, loaded.tokenizer, ids, max_tokens=max_tokens)
    ]
    decode = (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 1 else 0.0
    return stamps[0] - started, decode, len(ids)


def decode_speeds(loaded: LoadedModel, tokens: int, runs: int) -> tuple[float, float, float]:
    """Median decode tokens/s of the engine and of mlx-lm, and the median of their ratios.

    Runs alternate and each ratio compares two neighbouring runs, so a change in the machine's
    load (other processes) hits both sides of a ratio alike.
    """
    engine = Engine(loaded)
    params = SamplingParams(max_tokens=tokens)
    raw, ours = [], []
    for _ in range(runs):
        raw.append(raw_run(loaded, [SYSTEM, STORY], tokens)[1])
        ours.append(engine.generate([SYSTEM, STORY], params).stats.decode_tps)
    ratios = [o / r for o, r in zip(ours, raw, strict=True)]
    return statistics.median(ours), statistics.median(raw), statistics.median(ratios)


@dataclass(frozen=True, slots=True)
class FollowUp:
    """A follow-up turn on the engine (the previous turn cached) and on mlx-lm from empty."""

    history: int  # the previous turn's prompt tokens
    prompt: int  # the follow-up's
    ttft: float
    prefilled: int  # of `prompt`, by the engine
    scratch_ttft: float
    follow: list[dict[str, str]]  # the follow-up's messages


def follow_up(engine: Engine, target: int) -> FollowUp:
    """The previous turn (cached by the engine), then the follow-up, against mlx-lm from empty."""
    loaded = engine.model
    one = SamplingParams(max_tokens=1)
    previous = [*history(loaded, target), ask("Summarise our chat in one line.")]
    reply = engine.generate(previous, one, "bench").text
    follow = [*previous, {"role": "assistant", "content": reply}, ask("Now say it in French.")]
    ours = engine.generate(follow, one, "bench").stats
    scratch_ttft, _, prompt = raw_run(loaded, follow, 1)
    return FollowUp(
        history=len(loaded.tokenizer.apply_chat_template(previous)),
        prompt=prompt,
        ttft=ours.ttft_s,
        prefilled=ours.prefill_tokens,
        scratch_ttft=scratch_ttft,
        follow=follow,
    )


def synthetic_kv(loaded: LoadedModel, stack: CacheStack, tokens: int) -> None:
    """Feed `tokens` positions of KV of the model's geometry (values do not matter here)."""
    config = loaded.config.get("text_config", loaded.config)
    heads = config.get("num_key_value_heads", config.get("num_attention_heads", 1))
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    for cache in stack.caches:
        if type(cache) is KVCache:
            kv = mx.random.normal((1, heads, tokens, head_dim)).astype(mx.float16)
            cache.update_and_fetch(kv, kv + 0)
    start = len(stack.tokens)
    stack.tokens.extend(range(10_000 + start, 10_000 + start + tokens))
    stack.evaluate()


def sibling_bytes(loaded: LoadedModel, prompt: int = 2000, reply: int = 50) -> tuple[int, int]:
    """(bytes stored for 8 sibling replies of one `prompt`-token chat, bytes of one stack of
    prompt + reply tokens), through the branch cache, with synthetic KV."""
    cache = BranchCache(loaded.model, 10**12, None)
    stack = CacheStack.empty(loaded.model)
    synthetic_kv(loaded, stack, prompt)
    head = list(stack.tokens)
    cache.give_back(stack, "bench")
    for sibling in range(8):
        taken = cache.take([*head, 0], "bench").stack  # a regenerate: the prompt, reused
        synthetic_kv(loaded, taken, reply)
        taken.tokens[-reply:] = [sibling * 1000 + t for t in range(reply)]  # a distinct reply
        cache.give_back(taken, "bench")
    one = CacheStack.empty(loaded.model)
    synthetic_kv(loaded, one, prompt + reply)
    return cache.nbytes(), one.nbytes


def restore_seconds(loaded: LoadedModel, tokens: int = 2000, repeats: int = 5) -> float:
    """Median time to rebuild a `tokens`-token branch from the trie into contiguous caches."""
    cache = BranchCache(loaded.model, 10**12, None)
    branches = []
    for tail in range(2):
        stack = CacheStack.empty(loaded.model)
        synthetic_kv(loaded, stack, tokens)
        stack.tokens[-1] = tail  # two branches, diverging at their last token
        branches.append(list(stack.tokens))
        cache.give_back(stack, "bench")
    times = []
    for i in range(repeats):
        wanted = branches[i % 2]
        started = time.perf_counter()
        taken = cache.take([*wanted, 0], "bench")  # the other branch is live: a restore
        taken.stack.evaluate()
        times.append(time.perf_counter() - started)
        assert taken.cached == tokens
        cache.give_back(taken.stack, "bench")
    return statistics.median(times)


def prefill_rate(loaded: LoadedModel, tokens: int = 256) -> float:
    """Prompt tokens per second of a from-scratch prefill (mlx-lm, one pass)."""
    ids = list(range(100, 100 + tokens))
    started = time.perf_counter()
    next(stream_generate(loaded.model, loaded.tokenizer, ids, max_tokens=1))
    return tokens / (time.perf_counter() - started)


@dataclass(frozen=True, slots=True)
class RestartFollowUp:
    """A follow-up on a new engine over the saved caches, against mlx-lm from empty."""

    history: int  # the previous turn's prompt tokens
    ttft: float
    disk: int  # prompt tokens read from the saved caches
    prompt: int
    scratch_ttft: float
    identical: bool  # the two replies' tokens


def restart_follow_up(loaded: LoadedModel, target: int, folder: Path) -> RestartFollowUp:
    """A conversation cached by one engine, saved, then a follow-up on a new engine on the same
    folder, against mlx-lm from an empty cache; greedy, so the tokens must be identical."""
    greedy = SamplingParams(max_tokens=8)
    previous = [*history(loaded, target), ask("Summarise our chat in one line.")]
    first = Engine(loaded, cache_dir=folder)
    reply = first.generate(previous, SamplingParams(max_tokens=1), "bench").text
    first.close()
    follow = [*previous, {"role": "assistant", "content": reply}, ask("Now say it in French.")]
    again = Engine(loaded, cache_dir=folder)
    ours = again.generate(follow, greedy, "bench")
    ids = loaded.tokenizer.apply_chat_template(follow, add_generation_prompt=True)
    started = time.perf_counter()
    scratch: list[int] = []
    scratch_ttft = None
    for response in stream_generate(loaded.model, loaded.tokenizer, ids, max_tokens=8):
        scratch.append(response.token)
        if len(scratch) == 1:
            scratch_ttft = time.perf_counter() - started
    if scratch_ttft is None:
        raise RuntimeError("mlx-lm generated no token for the follow-up after a restart")
    return RestartFollowUp(
        history=len(loaded.tokenizer.apply_chat_template(previous)),
        ttft=ours.stats.ttft_s,
        disk=ours.stats.disk_tokens,
        prompt=ours.stats.prompt_tokens,
        scratch_ttft=scratch_ttft,
        identical=list(ours.token_ids) == scratch,
    )


def boundary_ms(messages_count: int = 400, repeats: int = 5) -> tuple[float, float]:
    """Median ms of one request's boundary work in a long chat on the tiny qwen3_5: with
    nothing cached (after a restart) and with the history cached (a follow-up)."""
    from tests.tiny_models import build_model

    folder = build_model("qwen3_5", Path(tempfile.mkdtemp()) / "qwen3_5")
    tokenizer = load_model(folder).tokenizer
    messages = [SYSTEM]
    for i in range(messages_count // 2):
        question, answer = TURNS[i % len(TURNS)]
        messages += [ask(question), {"role": "assistant", "content": answer}]
    messages.append(ask("And then?"))
    prompt = render_prompt(tokenizer, messages)  # the request's own rendering, done anyway
    suffix = generation_suffix(tokenizer)  # found once per model
    cached = len(tokenizer.apply_chat_template(messages[:-2]))
    results = []
    for after in (0, cached):
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            message_boundaries(tokenizer, messages, prompt, after, suffix)
            times.append(time.perf_counter() - started)
        results.append(statistics.median(times) * 1000)
    return results[0], results[1]


def branch_counts(
    engine: Engine, last: list[dict[str, str]]
) -> tuple[GenerationStats, GenerationStats, int]:
    """Prefill stats of a regenerate of `last`, and of a switch back to a stored branch after
    an edit, with the new turn's own token count."""
    one = SamplingParams(max_tokens=1)
    regenerate = engine.generate(last, SamplingParams(max_tokens=4), "bench").stats
    branch_a = [*last, {"role": "assistant", "content": "Résumé en français."}, ask("Thanks!")]
    reply = engine.generate(branch_a, one, "bench")
    engine.generate([*last[:-1], ask("Now in German.")], one, "bench")  # the edit: branch B
    back = [*branch_a, {"role": "assistant", "content": reply.text}, ask("One more, in Spanish.")]
    switch = engine.generate(back, one, "bench").stats
    template = engine.model.tokenizer.apply_chat_template
    new_turn = (
        len(template(back, add_generation_prompt=True))
        - len(template(branch_a, add_generation_prompt=True))
        - len(reply.token_ids)
    )
    return regenerate, switch, new_turn


def rows(loaded: LoadedModel, args: argparse.Namespace) -> list[tuple[str, ...]]:
    """The section's table: HEADER, then one row per figure."""
    ours_tps, raw_tps, decode_ratio = decode_speeds(loaded, args.decode_tokens, args.runs)
    print(f"decode measured: engine {ours_tps:.1f} tok/s, mlx-lm {raw_tps:.1f} tok/s", flush=True)
    engine = Engine(loaded)
    follows: list[FollowUp] = []
    for target in (250, 500):
        follows.append(follow_up(engine, target))
        print(f"follow-up after {follows[-1].history} history tokens measured", flush=True)
    regenerate, switch, new_turn = branch_counts(engine, follows[-1].follow)
    stored, one_stack = sibling_bytes(loaded)
    restore = restore_seconds(loaded)
    prefill_2000 = 2000 / prefill_rate(loaded)  # linear: an underestimate, so a fair ratio
    print("branch cache figures measured", flush=True)
    restart = restart_follow_up(loaded, 1000, WORKDIR / "restart-caches")
    cold_ms, warm_ms = boundary_ms()

    figures: list[tuple[str, ...]] = [
        HEADER,
        (
            "decode tokens/s (median; ratio: median of paired runs)",
            f"{ours_tps:.2f}",
            f"{raw_tps:.2f}",
            f"{decode_ratio:.3f}",
            ">= 0.97",
        ),
    ]
    for f in follows:
        figures.append(
            (
                f"follow-up TTFT after {f.history} history tokens (s)",
                f"{f.ttft:.3f} ({f.prefilled} of {f.prompt} prefilled)",
                f"{f.scratch_ttft:.3f} ({f.prompt} prefilled)",
                f"{f.ttft / f.scratch_ttft:.3f}",
                "<= 0.1 at 500",
            )
        )
    figures += [
        (
            "regenerate: prompt tokens prefilled",
            str(regenerate.prefill_tokens),
            str(regenerate.prompt_tokens),
            "",
            "<= 1",
        ),
        (
            "switch back to a stored branch: prefilled",
            str(switch.prefill_tokens),
            str(switch.prompt_tokens),
            "",
            f"the new turn: {new_turn}",
        ),
        (
            "8 sibling replies of a 2,000-token chat: bytes held (MB)",
            f"{stored / 1e6:.1f}",
            f"{one_stack / 1e6:.1f} (one 2,050-token stack)",
            f"{stored / one_stack:.3f}",
            "<= 1.3",
        ),
        (
            "restore a 2,000-token branch (s)",
            f"{restore:.4f}",
            f"{prefill_2000:.1f} (its prefill)",
            f"{restore / prefill_2000:.4f}",
            "<= 0.05",
        ),
        (
            f"after a restart: follow-up TTFT after {restart.history} history tokens (s)",
            f"{restart.ttft:.3f} ({restart.disk} of {restart.prompt} from disk)",
            f"{restart.scratch_ttft:.3f}",
            f"{restart.ttft / restart.scratch_ttft:.3f}",
            "<= 0.15, identical: " + ("yes" if restart.identical else "NO"),
        ),
        (
            "boundary work, 400-message chat, tiny qwen3_5 (ms): cold / cached",
            f"{cold_ms:.1f} / {warm_ms:.1f}",
            "",
            "",
            "< 50",
        ),
    ]
    return figures
