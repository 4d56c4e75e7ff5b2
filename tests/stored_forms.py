"""Quantized (4-bit) and bfloat16 copies of the tiny models, for the float32 conversion on the
CPU (inference/cpu/float32_weights.py); the fixture is in tests/conftest.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import mlx.core as mx
from mlx.utils import tree_flatten
from mlx_lm.utils import load_model, quantize_model

from inference.loading.model_files import WEIGHTS_PATTERN
from inference.models.registry import get_model_classes
from tests.tiny_models import KINDS


def stored_copy(source: Path, folder: Path, form: str) -> Path:
    """`source` re-saved as "4-bit" (group size 32; layers whose width 32 does not divide stay
    float, as mlx-lm leaves them) or as "bfloat16"."""
    model, config = load_model(source, get_model_classes=get_model_classes)
    if form == "4-bit":
        model, config = quantize_model(model, config, group_size=32, bits=4)
    else:
        model.set_dtype(mx.bfloat16)
    folder.mkdir(parents=True)
    for file in source.iterdir():
        if file.is_file() and not file.match(WEIGHTS_PATTERN) and file.name != "config.json":
            shutil.copy(file, folder / file.name)
    weights = dict(tree_flatten(model.parameters()))
    mx.save_safetensors(str(folder / "model.safetensors"), weights, metadata={"format": "mlx"})
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    return folder


def quantized_models(tiny_models_dir: Path, root: Path) -> Path:
    """<root>/<kind>/: every tiny model, 4-bit."""
    for kind in KINDS:
        stored_copy(tiny_models_dir / kind, root / kind, "4-bit")
    return root
