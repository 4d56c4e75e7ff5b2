"""Images through real processor settings: the token counts people will see, the detail limit,
and digests that tell apart what the model sees."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inference.loading.load import load_model
from inference.vision.images import ImageSource
from tests.tiny_vision import png_bytes

# Published processor settings: SmolVLM-256M-Instruct's tiles of 512 px (64 tokens each) up to a
# 2,048 px edge, and Qwen2-VL's 28 px cells up to 12.8 megapixels.
SMOLVLM_256M = {"size": {"longest_edge": 2048}, "max_image_size": {"longest_edge": 512}}
QWEN2_VL = {"min_pixels": 3136, "max_pixels": 12845056}


def _processing(
    tiny_vision_dir: Path, tmp_path: Path, kind: str, settings: dict, seq_len: int | None = None
):
    folder = tmp_path / kind
    shutil.copytree(tiny_vision_dir / kind, folder)
    config = json.loads((folder / "preprocessor_config.json").read_text())
    (folder / "preprocessor_config.json").write_text(json.dumps({**config, **settings}))
    if seq_len is not None:
        (folder / "processor_config.json").write_text(
            json.dumps({"processor_class": "SmolVLMProcessor", "image_seq_len": seq_len})
        )
    loaded = load_model(folder)
    assert loaded.vision is not None
    return loaded.vision


@pytest.fixture(scope="module")
def screenshot() -> ImageSource:
    return ImageSource(png_bytes(1920, 1080, 9), "screenshot.png")


def test_a_full_hd_screenshot_is_13_smolvlm_tiles(
    tiny_vision_dir: Path, tmp_path: Path, screenshot: ImageSource
) -> None:
    vision = _processing(tiny_vision_dir, tmp_path, "smolvlm", SMOLVLM_256M, seq_len=64)
    prepared = vision.processing.prepare(screenshot)
    image_tokens = prepared.token_ids.count(vision.image_token_id)
    assert image_tokens == 13 * 64
    smaller = vision.processing.prepare(screenshot, detail=1024)
    assert smaller.token_ids.count(vision.image_token_id) < image_tokens
    assert smaller.digest != prepared.digest


def test_a_full_hd_screenshot_is_2691_qwen2_vl_tokens(
    tiny_vision_dir: Path, tmp_path: Path, screenshot: ImageSource
) -> None:
    vision = _processing(tiny_vision_dir, tmp_path, "qwen2_5_vl", QWEN2_VL)
    prepared = vision.processing.prepare(screenshot)
    assert prepared.token_ids.count(vision.image_token_id) == 2691
    assert prepared.grid == (1, 78, 138)
    capped = vision.processing.prepare(screenshot, detail=960)
    assert capped.token_ids.count(vision.image_token_id) < 2691 // 3


def test_digests_follow_the_pixels_not_the_size_or_the_name(
    tiny_vision_dir: Path, tmp_path: Path
) -> None:
    vision = _processing(tiny_vision_dir, tmp_path, "qwen2_5_vl", {})
    a = vision.processing.prepare(ImageSource(png_bytes(40, 30, 1), "a.png"))
    renamed = vision.processing.prepare(ImageSource(png_bytes(40, 30, 1), "b.png"))
    other = vision.processing.prepare(ImageSource(png_bytes(40, 30, 2), "a.png"))
    assert a.digest == renamed.digest
    assert a.token_ids == other.token_ids and a.digest != other.digest
