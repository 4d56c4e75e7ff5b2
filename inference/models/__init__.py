"""Model families Branchwise runs: its own modules first, then mlx-lm's.

`LOCAL_MODEL_TYPES` maps a config's `model_type` to a module under `inference.models` that has
mlx-lm's shape (`ModelArgs`, `Model`); every other type goes to mlx-lm through its public
`MODEL_REMAPPING` and `mlx_lm.models.<name>`. `get_model_classes` is what
`mlx_lm.utils.load_model(path, get_model_classes=...)` takes, so nothing in mlx-lm is edited
and nothing is ever loaded from the model folder.
"""

from __future__ import annotations

import importlib
from typing import Any

from mlx_lm.utils import MODEL_REMAPPING

LOCAL_MODEL_TYPES: dict[str, str] = {"dhara": "dhara"}


def get_model_classes(config: dict[str, Any]) -> tuple[type, type]:
    """The (Model, ModelArgs) classes for `config["model_type"]`.

    Raises ValueError when neither Branchwise nor mlx-lm has the type.
    """
    model_type = config["model_type"]
    if model_type in LOCAL_MODEL_TYPES:
        module = importlib.import_module(f"inference.models.{LOCAL_MODEL_TYPES[model_type]}")
        return module.Model, module.ModelArgs
    name = MODEL_REMAPPING.get(model_type, model_type)
    try:
        module = importlib.import_module(f"mlx_lm.models.{name}")
    except ImportError as error:
        raise ValueError(f"Model type {model_type} not supported.") from error
    return module.Model, module.ModelArgs
