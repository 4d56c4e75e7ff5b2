"""Images whose tokens attend both ways (Gemma 4 with `use_bidirectional_attention: "vision"`)
are computed whole: no prefill chunk ends inside one, and a cached prefix that would end
inside one backs off to its start; every reply still equals mlx-vlm's own generation, which
runs such a prompt in one pass. Without the switch (and in Gemma 3, which mlx-vlm runs
causally) image tokens attend causally and a cut inside an image is exact."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import mlx.core as mx
import pytest

from inference import Engine, SamplingParams, load_model
from inference.loading.load import LoadedModel
from tests.engine_reference import Comparison, check_tokens
from tests.tiny_vision import png_bytes
from tests.tiny_vision_gemma import gemma4 as tiny_gemma4
from tests.vision_reference import mlx_vlm_reference

MAX_TOKENS = 6
GREEDY = SamplingParams(max_tokens=MAX_TOKENS)
A, C = png_bytes(40, 30, 1), png_bytes(90, 64, 3)
TWO_IMAGES = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Look at these:"},
            {"type": "image", "image": A},
            {"type": "image", "image": C},
            {"type": "text", "text": "What are they?"},
        ],
    }
]


def _gemma4_with(tiny_vision_dir: Path, folder: Path, **text: Any) -> LoadedModel:
    """The tiny Gemma 4 with its text config changed (a value None removes the key)."""
    shutil.copytree(tiny_vision_dir / "gemma4", folder)
    config = json.loads((folder / "config.json").read_text())
    for name, value in text.items():
        config["text_config"].pop(name, None)
        if value is not None:
            config["text_config"][name] = value
    (folder / "config.json").write_text(json.dumps(config))
    return load_model(folder)


@pytest.fixture(scope="module")
def gemma4(tiny_vision_dir: Path) -> LoadedModel:
    return load_model(tiny_vision_dir / "gemma4")


def engine(loaded: LoadedModel, chunk: int = 3) -> Engine:
    return Engine(loaded, cache_budget_bytes=1 << 28, prefill_chunk_tokens=chunk)


def assert_reference(loaded: LoadedModel, messages: list[dict[str, Any]], got: tuple) -> None:
    check_tokens(
        got, mlx_vlm_reference(loaded, messages, MAX_TOKENS), Comparison(), loaded.model_type
    )


def spans_of(run: Engine, messages: list[dict[str, Any]]) -> list[tuple[int, int]]:
    vision = run._builder.chat_request(messages, GREEDY, "c", "truncate_middle").vision
    assert vision is not None
    return [(span.start, span.end) for span in vision.spans]


def test_no_prefill_chunk_ends_inside_an_image(gemma4: LoadedModel) -> None:
    assert gemma4.vision is not None and gemma4.vision.atomic_images
    run = engine(gemma4)
    spans = spans_of(run, TWO_IMAGES)
    assert all(end - start > 3 for start, end in spans)  # longer than a chunk
    reported: list[int] = []
    result = run.generate(
        TWO_IMAGES, GREEDY, "c", on_progress=lambda done, _: reported.append(done)
    )
    assert len(reported) > 8
    assert not [d for d in reported for start, end in spans if start < d < end]
    assert {end for _, end in spans} <= set(reported)  # each image ran on to its end
    assert_reference(gemma4, TWO_IMAGES, result.token_ids)


def test_a_cached_prefix_ending_inside_an_image_backs_off_to_its_start(tmp_path: Path) -> None:
    """A stack cut inside an image (made here by hand: the engine never cuts one) is reused
    only up to the image's first token. All-global layers, so any prefix can be restored."""
    tiny_gemma4(tmp_path, 0, sliding=False)
    loaded = load_model(tmp_path)
    run = engine(loaded)
    assert run._cache.rewinds_anywhere
    request = run._builder.chat_request(TWO_IMAGES, GREEDY, "c", "truncate_middle")
    start, end = spans_of(run, TWO_IMAGES)[0]
    cut = start + 3
    assert cut < end
    stack = run._cache.take(request.key, "c").stack
    run._runner.images.begin(request)
    loaded.model(
        mx.array(request.ids[:cut])[None],
        cache=stack.caches,
        **run._runner.images.chunk(request, 0, cut),
    )
    stack.tokens = request.key[:cut]
    run._cache.give_back(stack, "c")
    result = run.generate(TWO_IMAGES, GREEDY, "c")
    assert result.stats.cached_tokens == start
    assert_reference(loaded, TWO_IMAGES, result.token_ids)


def test_without_the_switch_image_tokens_attend_causally_and_may_be_cut(
    tiny_vision_dir: Path, tmp_path: Path
) -> None:
    loaded = _gemma4_with(tiny_vision_dir, tmp_path / "causal", use_bidirectional_attention=None)
    assert loaded.vision is not None and not loaded.vision.atomic_images
    run = engine(loaded)
    start, end = spans_of(run, TWO_IMAGES)[0]
    cancel = threading.Event()

    def stop_inside(done: int, total: int) -> None:
        if start < done < end:
            cancel.set()

    stopped = run.generate(TWO_IMAGES, GREEDY, "c", on_progress=stop_inside, cancel=cancel)
    assert stopped.finish_reason == "cancelled"
    resumed = run.generate(TWO_IMAGES, GREEDY, "c")
    assert start < resumed.stats.cached_tokens < end
    assert_reference(loaded, TWO_IMAGES, resumed.token_ids)
