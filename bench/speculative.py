"""Speculative decoding benchmark (issue 19): prompt lookup against plain decoding, one run.

    .venv/bin/python bench/speculative.py [--model PATH] [--runs N] [--rewrite-tokens N]

Without --model it imports the SmolLM2-135M GGUF embedded with the app into a folder under the
system temp dir (reused by later runs). Both tasks are decoded greedily with speculation "off"
and "prompt_lookup", alternating, on one engine (the prompt is cached after the first run, which
does not touch decode speed), and it prints decode tokens/s, their ratio, the share of drafted
tokens the model accepted, and whether the tokens were identical:

* a rewrite ("Repeat the following paragraph with every sentence in the past tense: ..."),
  where most of the reply can be copied from the prompt (goal: 1.5x or more);
* an open question with nothing to copy (goal: at least 0.97x, i.e. no slower).

It also prints what a verification pass over 1 + 8 tokens costs against a one-token step on
this machine: speculation can only win where that ratio is well below the tokens a pass yields
(on a GPU it is near 1; with MLX on a CPU near 9, and the engine then declines to draft).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `inference` and `app` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mlx.core as mx
from mlx_lm.models.cache import make_prompt_cache, trim_prompt_cache

from app.embedded_model import embedded_gguf_path
from inference import Engine, GenerationResult, LoadedModel, import_gguf, load_model
from inference.sampling import SamplingParams

PARAGRAPH = (
    "The lighthouse keeper climbs the stairs every evening before the sun goes down. He cleans "
    "the great lens with a soft cloth and checks the oil in the lamp. The wind comes in from the "
    "sea and rattles the windows of the lantern room. Far below, the waves break against the "
    "rocks and throw white spray into the air. A fishing boat passes close to the reef, and its "
    "captain waves at the tower. The keeper writes the weather in his logbook and lights the "
    "lamp. All night the beam turns slowly over the dark water, and the ships find their way "
    "home. In the morning the storm arrives from the west. The sky turns grey and the first "
    "drops of rain hit the glass. The keeper closes the shutters and carries wood up to the "
    "stove. By noon the waves are higher than the rocks, and the whole tower shakes in the "
    "wind. A small sailing boat loses its mast near the harbour, and the keeper sends a signal "
    "to the lifeboat station. The crew rows out through the foam and brings the two sailors "
    "back to land. In the evening the wind drops, the clouds open, and the stars come out over "
    "the quiet sea. The keeper makes a cup of tea and writes the whole story in his logbook."
)
TASKS = {
    "rewrite": "Repeat the following paragraph with every sentence in the past tense: "
    + PARAGRAPH,
    "open question": "What makes a good friend? Answer in a few sentences.",
}


def default_model(workdir: Path) -> Path:
    models = workdir / "smollm2"  # kept between runs: the import takes a while
    done = [p for p in models.glob("*") if (p / "config.json").is_file()]
    if done:
        return done[0]
    gguf = embedded_gguf_path()
    if gguf is None:
        sys.exit("The embedded SmolLM2 GGUF is not installed; pass --model PATH.")
    print(f"importing {gguf.name} into {models} ...", flush=True)
    return import_gguf(gguf, models)


def pass_cost_ratio(loaded: LoadedModel, prompt: str, drafted: int = 8) -> float:
    """Seconds of a forward pass over 1 + `drafted` tokens over a one-token pass (best of 3)."""
    ids = loaded.tokenizer.apply_chat_template([{"role": "user", "content": prompt}])
    caches = make_prompt_cache(loaded.model)
    mx.eval(loaded.model(mx.array(ids)[None], cache=caches))
    best = {}
    for size in (1, 1 + drafted):
        times = []
        for _ in range(3):
            started = time.perf_counter()
            mx.eval(loaded.model(mx.array(ids[:size])[None], cache=caches))
            times.append(time.perf_counter() - started)
            trim_prompt_cache(caches, size)
        best[size] = min(times)
    return best[1 + drafted] / best[1]


def run(engine: Engine, prompt: str, tokens: int, speculation: str) -> GenerationResult:
    params = SamplingParams(max_tokens=tokens, speculation=speculation)  # type: ignore[arg-type]
    return engine.generate([{"role": "user", "content": prompt}], params, "bench")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--rewrite-tokens", type=int, default=300)
    parser.add_argument("--question-tokens", type=int, default=100)
    args = parser.parse_args()
    folder = args.model or default_model(Path(tempfile.gettempdir()) / "branchwise-bench")
    loaded = load_model(folder)
    engine = Engine(loaded)
    print(f"a pass over 9 tokens costs {pass_cost_ratio(loaded, PARAGRAPH):.1f}x a one-token step")
    limits = {"rewrite": args.rewrite_tokens, "open question": args.question_tokens}
    for task, prompt in TASKS.items():
        speeds: dict[str, list[float]] = {"off": [], "prompt_lookup": []}
        replies: dict[str, GenerationResult] = {}
        for _ in range(args.runs):
            for mode in speeds:
                result = run(engine, prompt, limits[task], mode)
                speeds[mode].append(result.stats.decode_tps)
                replies[mode] = result
        plain, fast = (statistics.median(speeds[m]) for m in ("off", "prompt_lookup"))
        stats = replies["prompt_lookup"].stats
        share = stats.accepted_tokens / stats.drafted_tokens if stats.drafted_tokens else 0.0
        same = replies["off"].token_ids == replies["prompt_lookup"].token_ids
        print(
            f"{task}: {len(replies['off'].token_ids)} tokens, plain {plain:.2f} tok/s, "
            f"prompt lookup {fast:.2f} tok/s ({fast / plain:.2f}x), drafted "
            f"{stats.drafted_tokens}, accepted {stats.accepted_tokens} ({share:.0%}), "
            f"identical tokens: {same}",
            flush=True,
        )


if __name__ == "__main__":
    main()
