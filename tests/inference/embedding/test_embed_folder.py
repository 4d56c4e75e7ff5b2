"""An embedding model folder is told from a chat model by its layout, read without MLX, and one
Branchwise cannot run is refused with the reason before any weights are read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inference.embedding.folder import (
    MAX_TOKENS,
    Pooling,
    embedding_model_id,
    is_embedding_folder,
    read_embedding_folder,
)
from inference.errors import ModelLoadError
from tests.tiny_embedders import GEMMA_DOCUMENT, GEMMA_QUERY, QUERY_INSTRUCTION


def test_each_published_layout_is_read(tiny_embedders_dir: Path, tiny_models_dir: Path) -> None:
    qwen3 = read_embedding_folder(tiny_embedders_dir / "qwen3")
    assert (qwen3.pooling, qwen3.dimensions, qwen3.dense) == (Pooling.LAST, 64, ())
    assert (qwen3.query_prompt, qwen3.document_prompt) == (QUERY_INSTRUCTION, "")
    assert qwen3.max_tokens == MAX_TOKENS and not qwen3.bidirectional
    gemma = read_embedding_folder(tiny_embedders_dir / "gemma")
    assert (gemma.pooling, gemma.dimensions, len(gemma.dense)) == (Pooling.MEAN, 48, 2)
    assert (gemma.query_prompt, gemma.document_prompt) == (GEMMA_QUERY, GEMMA_DOCUMENT)
    assert gemma.bidirectional
    bge = read_embedding_folder(tiny_embedders_dir / "bge")
    assert (bge.pooling, bge.dimensions, bge.max_tokens) == (Pooling.FIRST, 32, 32)
    assert (bge.query_prompt, bge.document_prompt) == ("", "")
    assert all(is_embedding_folder(tiny_embedders_dir / n) for n in ("qwen3", "gemma", "bge"))
    assert not is_embedding_folder(tiny_models_dir / "llama")  # a chat model


def test_the_model_id_changes_with_any_of_its_weights(
    tiny_embedders_dir: Path, tmp_path: Path
) -> None:
    copy = shutil.copytree(tiny_embedders_dir / "gemma", tmp_path / "gemma")
    before = embedding_model_id(read_embedding_folder(copy))
    assert before == embedding_model_id(read_embedding_folder(tiny_embedders_dir / "gemma"))
    dense = copy / "3_Dense" / "model.safetensors"
    data = bytearray(dense.read_bytes())
    data[-1] ^= 1
    dense.write_bytes(bytes(data))
    assert embedding_model_id(read_embedding_folder(copy)) != before


def _edit(folder: Path, name: str, change: dict[str, object] | list[object]) -> None:
    path = folder / name
    value = json.loads(path.read_text())
    if isinstance(change, dict):
        value.update(change)
    else:
        value = change
    path.write_text(json.dumps(value))


@pytest.mark.parametrize(
    ("name", "file", "change", "message"),
    [
        (
            "bge",
            "1_Pooling/config.json",
            {"pooling_mode_cls_token": False, "pooling_mode_max_tokens": True},
            "pools by pooling_mode_max_tokens",
        ),
        ("bge", "config.json", {"model_type": "xlm-roberta"}, "of type 'xlm-roberta'"),
        ("gemma", "config.json", {"use_bidirectional_attention": False}, "causal Gemma 3"),
        ("qwen3", "modules.json", [], "lists no steps"),
        ("qwen3", "1_Pooling/config.json", {"include_prompt": False}, "leaves its prompt out"),
    ],
)
def test_what_cannot_run_is_refused_with_the_reason(
    tiny_embedders_dir: Path,
    tmp_path: Path,
    name: str,
    file: str,
    change: dict[str, object] | list[object],
    message: str,
) -> None:
    copy = shutil.copytree(tiny_embedders_dir / name, tmp_path / name)
    _edit(copy, file, change)
    with pytest.raises(ModelLoadError, match=message):
        read_embedding_folder(copy)


def test_steps_outside_the_folder_or_missing_are_refused(
    tiny_embedders_dir: Path, tmp_path: Path
) -> None:
    copy = shutil.copytree(tiny_embedders_dir / "gemma", tmp_path / "gemma")
    (copy / "3_Dense" / "model.safetensors").unlink()
    with pytest.raises(ModelLoadError, match=r"lacks 3_Dense/model\.safetensors"):
        read_embedding_folder(copy)
    modules = json.loads((copy / "modules.json").read_text())
    modules[2]["path"] = "../../elsewhere"
    (copy / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(ModelLoadError, match="points outside the folder"):
        read_embedding_folder(copy)
    (copy / "modules.json").write_bytes(b"[" * 2_000_000)
    with pytest.raises(ModelLoadError, match="too large"):
        read_embedding_folder(copy)
