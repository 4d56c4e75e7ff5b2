"""What every tiny vision model builder shares (tests.tiny_vision, tests.tiny_vision_gemma): a
tokenizer with the family's image tokens, the model mlx-vlm's loader would build from a config,
and random float32 weights saved with the config and tokenizer as an ordinary model folder."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import mlx.core as mx
from mlx.utils import tree_flatten
from tokenizers import AddedToken

from tests.tiny_models import _OUTPUT_SCALE, _write_tokenizer, build_tokenizer


def tokenizer_with(extra: list[str]) -> Any:
    tokenizer = build_tokenizer()
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in extra])
    return tokenizer


def model_from(config: dict[str, Any]) -> Any:
    """The model mlx-vlm's loader would build from `config`, through its public helpers."""
    from mlx_vlm.utils import get_model_and_args, update_module_configs

    config = json.loads(json.dumps(config))
    config.setdefault("text_config", {})
    model_class, _ = get_model_and_args(config=config)
    model_config = model_class.ModelConfig.from_dict(config)
    model_config = update_module_configs(model_config, model_class, config, ["text", "vision"])
    return model_class.Model(model_config)


def save_model(
    folder: Path,
    config: dict[str, Any],
    tokenizer: Any,
    seed: int,
    scales: Mapping[str, float] | None = None,
) -> None:
    """Random weights for `config`'s model, those whose names end with a key of `scales`
    multiplied by its value (see the Gemma builders: models that scale their embeddings up, or
    read logits through them)."""
    model = model_from(config)
    mx.random.seed(seed)
    # As the text models' (tests.tiny_models): spread logits so greedy choices are clear.
    factors = {"lm_head.weight": _OUTPUT_SCALE, **(scales or {})}
    weights = {}
    for name, value in tree_flatten(model.parameters()):
        weight = mx.random.normal(value.shape) * 0.2
        for suffix, factor in factors.items():
            if name.endswith(suffix):
                weight = weight * factor
        weights[name] = weight.astype(mx.float32)
    mx.save_safetensors(str(folder / "model.safetensors"), weights, metadata={"format": "mlx"})
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    _write_tokenizer(folder, tokenizer)
