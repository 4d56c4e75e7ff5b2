"""The model registry (inference.models): mlx-lm's architectures through its public names, our
own first, unknown types refused; and the product uses no private mlx-lm name."""

from __future__ import annotations

import ast
import json
import shutil
import sys
import types
from pathlib import Path

import mlx_lm.models.llama
import mlx_lm.models.qwen3_5
import pytest

import inference.models.registry as registry
from inference import ModelLoadError, load_model
from tests.paths import ROOT


def test_mlx_lm_types_resolve_after_its_renames() -> None:
    # mlx-lm has no models/mistral.py; it builds mistral with its llama code.
    llama = (mlx_lm.models.llama.Model, mlx_lm.models.llama.ModelArgs)
    assert registry.get_model_classes({"model_type": "mistral"}) == llama
    assert registry.get_model_classes({"model_type": "llama"}) == llama
    qwen = registry.get_model_classes({"model_type": "qwen3_5"})
    assert qwen == (mlx_lm.models.qwen3_5.Model, mlx_lm.models.qwen3_5.ModelArgs)


@pytest.mark.parametrize("model_type", ["bert", "cache", "base", "../llama", "llama.os"])
def test_unknown_types_and_helper_modules_are_not_architectures(model_type: str) -> None:
    with pytest.raises(ValueError, match=f"Model type {model_type} not supported"):
        registry.get_model_classes({"model_type": model_type})


def test_a_local_architecture_is_found_first_and_loads(
    llama_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = types.ModuleType("inference.models.tiny_local")
    local.Model, local.ModelArgs = mlx_lm.models.llama.Model, mlx_lm.models.llama.ModelArgs
    monkeypatch.setitem(sys.modules, local.__name__, local)
    monkeypatch.setitem(registry.LOCAL_MODEL_TYPES, "tiny_local", "tiny_local")
    folder = tmp_path / "local"
    shutil.copytree(llama_path, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "tiny_local"}))

    loaded = load_model(folder)

    assert loaded.model_type == "tiny_local"
    assert isinstance(loaded.model, mlx_lm.models.llama.Model)
    assert loaded.tokenizer.encode("Hello")


def test_an_unknown_type_is_refused_with_its_name_and_the_mlx_lm_version(
    llama_path: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "exotic"
    shutil.copytree(llama_path, folder)
    (folder / "config.json").write_text(json.dumps({"model_type": "brainwave9"}))
    with pytest.raises(ModelLoadError) as refused:
        load_model(folder)
    assert str(refused.value) == (
        f"The model type 'brainwave9' is not supported by mlx-lm {mlx_lm.__version__}."
    )


def _private_mlx_lm_names(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mlx_lm"):
            found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("mlx_lm") and "._" in a.name]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id == "mlx_lm":
                found.append(ast.unparse(node))
    return found


def test_the_checker_sees_private_names() -> None:
    source = "from mlx_lm.utils import _get_classes\nimport mlx_lm\nmlx_lm.utils._download('x')\n"
    assert _private_mlx_lm_names(source) == ["mlx_lm.utils._get_classes", "mlx_lm.utils._download"]


def test_the_product_uses_only_public_mlx_lm_names() -> None:
    files = [p for layer in ("app", "inference", "ui") for p in (ROOT / layer).rglob("*.py")]
    assert files
    private = {
        str(p.relative_to(ROOT)): names
        for p in files
        if (names := _private_mlx_lm_names(p.read_text(encoding="utf-8")))
    }
    assert private == {}
