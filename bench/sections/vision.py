"""Vision figures (issue 31 item 11), on a random Qwen2.5-VL large enough for ratios to mean
something (tests/tiny_vision.py, 6 layers, an 896×672 screenshot of 768 tokens) or the model given
with --vision-model:

* a follow-up's time to first token in a chat with an image (the previous turn cached) over
  mlx-vlm's own generation from scratch on the same messages (goal ≤ 0.1×), tokens identical;
* vision-encoder calls per turn for an image already in the chat (goal 0), over three turns;
* memory per image: the encoder output kept for it, and the key/value bytes of its tokens.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from bench.default_model import WORKDIR
from inference import Engine, LoadedModel, SamplingParams, load_model
from tests.tiny_vision import build_bench_vision_model, png_bytes
from tests.vision_reference import mlx_vlm_reference

HEADER = ("measure", "Branchwise", "mlx-vlm from scratch", "ratio", "goal")
REPLIES = [
    "It is a screenshot of a window with a chart.",
    "The chart rises to the right.",
    "The title reads Sales by month.",
]
QUESTIONS = [
    "What is in this picture?",
    "What does the chart show?",
    "What is its title?",
    "Summarise it in one line.",
]


def vision_model(args: argparse.Namespace) -> LoadedModel:
    if args.vision_model is not None:
        return load_model(args.vision_model)
    folder = WORKDIR / "bench-qwen2.5-vl"
    if not (folder / "config.json").is_file():
        build_bench_vision_model(folder)
    return load_model(folder)


def chat(turns: int, picture: bytes) -> list[dict[str, Any]]:
    """A chat whose first turn sends the picture, then `turns` text turns after it."""
    first = {
        "role": "user",
        "content": [{"type": "image", "image": picture}, {"type": "text", "text": QUESTIONS[0]}],
    }
    messages: list[dict[str, Any]] = [first]
    for turn in range(turns):
        messages += [
            {"role": "assistant", "content": REPLIES[turn]},
            {"role": "user", "content": QUESTIONS[turn + 1]},
        ]
    return messages


def scratch_ttft(
    loaded: LoadedModel, messages: list[dict[str, Any]]
) -> tuple[float, tuple[int, ...]]:
    started = time.perf_counter()
    reference = mlx_vlm_reference(loaded, messages, 1)
    return time.perf_counter() - started, reference.tokens


def rows(loaded: LoadedModel, args: argparse.Namespace) -> list[tuple[str, ...]]:
    """The section's table; `loaded` (a text model) is not used."""
    model = vision_model(args)
    picture = png_bytes(896, 672, 7)
    one = SamplingParams(max_tokens=1)
    ours, theirs, identical = [], [], True
    for _ in range(args.runs):
        engine = Engine(model)
        engine.generate(chat(1, picture), one, "bench")  # the previous turn, now cached
        follow = chat(2, picture)
        result = engine.generate(follow, one, "bench")
        seconds, tokens = scratch_ttft(model, follow)
        ours.append(result.stats.ttft_s)
        theirs.append(seconds)
        identical = identical and result.token_ids == tokens
    ratio = statistics.median(o / t for o, t in zip(ours, theirs, strict=True))
    engine = Engine(model)
    encoder = engine._caches.features
    if encoder is None:
        raise RuntimeError(f"{model.model_id} is not read as a vision model: it keeps no images")
    engine.generate(chat(0, picture), one, "bench")
    calls = []
    for turns in (1, 2, 3):
        before = encoder.encoded
        engine.generate(chat(turns, picture), one, "bench")
        calls.append(encoder.encoded - before)
    features = encoder.nbytes()
    span = engine._builder.chat_request(chat(0, picture), one, "b", "truncate_middle").vision
    image_tokens = len(span.spans[0].image.token_ids) if span is not None else 0
    live = engine._cache._live
    if live is None:
        raise RuntimeError("the engine holds no live cache after a reply")
    kv_per_token = engine._cache.nbytes() / max(1, len(live.tokens))
    print("vision figures measured", flush=True)
    return [
        HEADER,
        (
            f"follow-up time to first token ({model.model_id}, {image_tokens}-token image)",
            f"{statistics.median(ours) * 1000:.0f} ms",
            f"{statistics.median(theirs) * 1000:.0f} ms",
            f"{ratio:.3f}x" + ("" if identical else " (TOKENS DIFFER)"),
            "<= 0.1x",
        ),
        (
            "vision-encoder calls per later turn (3 turns)",
            " ".join(map(str, calls)),
            "1 each",
            "-",
            "0",
        ),
        ("memory per image: encoder output kept", f"{features / 1e6:.2f} MB", "-", "-", "-"),
        (
            "memory per image: its tokens' keys and values",
            f"{image_tokens * kv_per_token / 1e6:.2f} MB",
            "-",
            "-",
            "-",
        ),
    ]
