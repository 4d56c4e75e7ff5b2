"""Branchwise's registry of model architectures: which Python classes build a model type.

mlx-lm resolves a config's `model_type` with a private helper; this registry does the same with
its public names (`MODEL_REMAPPING`, `MODEL_ARCHITECTURE_REMAPPING` and the `mlx_lm.models.<name>`
modules), and lets Branchwise add architectures of its own as modules of this package, found
first. Every module (ours or mlx-lm's) defines `Model` and `ModelArgs`.
"""

from __future__ import annotations

import importlib
from typing import Any

from mlx_lm.utils import MODEL_ARCHITECTURE_REMAPPING, MODEL_REMAPPING

# model_type -> module name under `inference.models`, for architectures mlx-lm lacks.
LOCAL_MODEL_TYPES: dict[str, str] = {"dhara": "dhara"}
PACKAGE = __name__.rpartition(".")[0]


def get_model_classes(config: dict[str, Any]) -> tuple[type, type]:
    """(Model, ModelArgs) for `config["model_type"]`: a local architecture first, else mlx-lm's.

    Raises ValueError when neither knows the type. Shaped for `mlx_lm.utils.load_model`'s
    `get_model_classes` argument."""
    model_type = config["model_type"]
    if model_type in LOCAL_MODEL_TYPES:
        module = importlib.import_module(f"{PACKAGE}.{LOCAL_MODEL_TYPES[model_type]}")
        return module.Model, module.ModelArgs
    module_name = _mlx_lm_module_name(model_type, config.get("architectures") or ())
    unknown = ValueError(f"Model type {model_type} not supported.")
    # A config is untrusted: its type must name a module of the package, not a path or a
    # helper module such as `cache` that has no model in it.
    if not module_name.isidentifier():
        raise unknown
    try:
        module = importlib.import_module(f"mlx_lm.models.{module_name}")
    except ImportError as error:
        raise unknown from error
    if not (hasattr(module, "Model") and hasattr(module, "ModelArgs")):
        raise unknown
    return module.Model, module.ModelArgs


def _mlx_lm_module_name(model_type: str, architectures: str | list[str] | tuple[str, ...]) -> str:
    """mlx-lm's module for a type, after its renames (e.g. mistral -> llama)."""
    if isinstance(architectures, str):
        architectures = (architectures,)
    for architecture in architectures:
        remapped = MODEL_ARCHITECTURE_REMAPPING.get((model_type, architecture))
        if remapped is not None:
            return remapped
    return MODEL_REMAPPING.get(model_type, model_type)
