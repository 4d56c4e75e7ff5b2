from collections.abc import Callable
from pathlib import Path
from typing import Any

from mlx import nn
from mlx_lm.tokenizer_utils import TokenizerWrapper

MODEL_REMAPPING: dict[str, str]
# (model_type, architecture) -> module name
MODEL_ARCHITECTURE_REMAPPING: dict[tuple[str, str], str]

def load_model(
    model_path: Path,
    lazy: bool = False,
    strict: bool = True,
    model_config: dict[str, Any] | None = None,
    get_model_classes: Callable[[dict[str, Any]], tuple[type[nn.Module], type[Any]]] = ...,
    trust_remote_code: bool = False,
) -> tuple[nn.Module, dict[str, Any]]: ...
def load_tokenizer(
    model_path: str | Path,
    tokenizer_config_extra: dict[str, Any] | None = None,
    eos_token_ids: int | list[int] | None = None,
) -> TokenizerWrapper: ...
def dequantize_model(model: nn.Module) -> nn.Module: ...
