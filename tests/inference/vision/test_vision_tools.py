"""A vision model offered tools still sees the chat's images (LM Studio #245: "vision model
loses sight when given tools")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from inference import Engine, SamplingParams, load_model
from tests.engine_reference import Comparison, check_tokens
from tests.tiny_models import WEATHER_TOOL
from tests.tiny_vision import png_bytes
from tests.vision_reference import mlx_vlm_prompt_length, mlx_vlm_reference

TEMPLATE = (Path(__file__).parents[2] / "templates" / "qwen-vl-tools.jinja").read_text()


def test_images_reach_the_model_when_tools_are_offered(
    tiny_vision_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "qwen-tools"
    shutil.copytree(tiny_vision_dir / "qwen2_5_vl", folder)
    (folder / "chat_template.json").write_text(json.dumps({"chat_template": TEMPLATE}))
    loaded = load_model(folder)
    parts = [
        {"type": "image", "image": png_bytes(40, 30, 1)},
        {"type": "text", "text": "What is the weather where this was taken?"},
    ]
    messages = [{"role": "user", "content": parts}]
    engine = Engine(loaded)
    without_image = engine.count_prompt_tokens(
        [{"role": "user", "content": parts[1:]}], tools=[WEATHER_TOOL]
    )
    result = engine.generate(messages, SamplingParams(max_tokens=6), tools=[WEATHER_TOOL])
    assert result.stats.prompt_tokens == mlx_vlm_prompt_length(loaded, messages, [WEATHER_TOOL])
    assert result.stats.prompt_tokens > without_image + 4  # the image's tokens are in
    assert engine._caches.features.encoded == 1
    reference = mlx_vlm_reference(loaded, messages, 6, tools=[WEATHER_TOOL])
    check_tokens(
        result.token_ids,
        reference,
        Comparison(),
        "qwen2_5_vl with tools",
        complete=result.finish_reason != "tool_calls",
    )
