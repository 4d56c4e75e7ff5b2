"""Which folders load as vision models, and what a person is told when one cannot see."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inference import Engine, ModelLoadError, PromptError, SamplingParams, load_model
from tests.tiny_vision import png_bytes


def _with_config(source: Path, folder: Path, **changes: object) -> Path:
    shutil.copytree(source, folder)
    config = json.loads((folder / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_a_family_without_an_exact_path_loads_as_text_with_the_reason(
    llama_path: Path, tmp_path: Path
) -> None:
    folder = _with_config(
        llama_path, tmp_path / "seeing-llama", vision_config={"model_type": "siglip_vision_model"}
    )
    loaded = load_model(folder)
    assert loaded.vision is None
    assert "Images are not supported for 'llama' models yet" in loaded.text_only_reason
    engine = Engine(loaded, cache_budget_bytes=1 << 26)
    assert (
        engine.generate(
            [{"role": "user", "content": "Hi"}], SamplingParams(max_tokens=2)
        ).stats.generated_tokens
        >= 1
    )
    parts = [{"type": "image", "image": b"not even read"}, {"type": "text", "text": "Hi"}]
    with pytest.raises(PromptError, match=r"cannot see images.*not supported for 'llama'"):
        engine.generate([{"role": "user", "content": parts}], SamplingParams(max_tokens=2))


def test_a_vision_folder_without_processor_settings_says_so(
    tiny_vision_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "smolvlm"
    shutil.copytree(tiny_vision_dir / "smolvlm", folder)
    (folder / "preprocessor_config.json").unlink()
    (folder / "processor_config.json").unlink()
    # mlx-lm has no text-only SmolVLM either, so it cannot load at all: the message says why.
    with pytest.raises(ModelLoadError, match="no image processor settings"):
        load_model(folder)


def test_loading_never_writes_into_the_model_folder(tiny_vision_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "qwen"
    shutil.copytree(tiny_vision_dir / "qwen2_5_vl", folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    parts = [{"type": "image", "image": png_bytes(30, 30, 4)}, {"type": "text", "text": "Hi"}]
    Engine(load_model(folder)).generate(
        [{"role": "user", "content": parts}], SamplingParams(max_tokens=2)
    )
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
