"""Prompt-lookup figures (issue 19 item 5): decode tokens/s with prompt-lookup speculation over
plain decoding, on one engine, greedy, runs alternating, best of each compared:

* a rewrite ("Repeat the following paragraph with every sentence in the past tense: ..."),
  where most of the reply can be copied from the prompt (goal: 1.5x or more);
* an open question with nothing to copy (goal: at least 0.97x, i.e. no slower).

Each row also gives the share of drafted tokens the model accepted and whether the two replies
are the same tokens (they must be: speculation changes speed, never the reply). The prompt is
cached after the first run, which does not touch decode speed.
"""

from __future__ import annotations

import argparse

from inference import Engine, GenerationResult, LoadedModel, SamplingParams
from inference.decoding.sampling import Speculation

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
REWRITE = "Repeat the following paragraph with every sentence in the past tense: " + PARAGRAPH
QUESTION = "What makes a good friend? Answer in a few sentences."
HEADER = (
    "task (greedy)",
    "prompt lookup tok/s",
    "plain tok/s",
    "ratio",
    "target",
    "drafted / accepted",
    "identical tokens",
)


def reply(engine: Engine, prompt: str, tokens: int, speculation: Speculation) -> GenerationResult:
    params = SamplingParams(max_tokens=tokens, temperature=0.0, speculation=speculation)
    return engine.generate([{"role": "user", "content": prompt}], params, "bench")


def rows(loaded: LoadedModel, args: argparse.Namespace) -> list[tuple[str, ...]]:
    """The section's table: HEADER, then one row per task."""
    engine = Engine(loaded)
    figures: list[tuple[str, ...]] = [HEADER]
    tasks = [
        ("rewrite", REWRITE, args.rewrite_tokens, ">= 1.5"),
        ("open question", QUESTION, args.question_tokens, ">= 0.97"),
    ]
    for task, prompt, tokens, target in tasks:
        speeds: dict[Speculation, list[float]] = {"off": [], "prompt_lookup": []}
        replies: dict[Speculation, GenerationResult] = {}
        for run in range(args.runs):
            for mode in speeds:
                replies[mode] = reply(engine, prompt, tokens, mode)
                speeds[mode].append(replies[mode].stats.decode_tps)
            print(
                f"{task} run {run + 1}: plain {speeds['off'][-1]:.2f} tok/s, prompt lookup "
                f"{speeds['prompt_lookup'][-1]:.2f} tok/s",
                flush=True,
            )
        plain, fast = max(speeds["off"]), max(speeds["prompt_lookup"])
        stats = replies["prompt_lookup"].stats
        share = stats.accepted_tokens / stats.drafted_tokens if stats.drafted_tokens else 0.0
        same = replies["off"].token_ids == replies["prompt_lookup"].token_ids
        figures.append(
            (
                f"{task}, {len(replies['off'].token_ids)} tokens (best of {args.runs})",
                f"{fast:.2f}",
                f"{plain:.2f}",
                f"{fast / plain:.3f}",
                target,
                f"{stats.drafted_tokens} / {stats.accepted_tokens} ({share:.0%})",
                "yes" if same else "NO",
            )
        )
    return figures
