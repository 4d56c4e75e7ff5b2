"""Float32 weights on MLX's CPU backend, where they fit: memory traded for speed.

On the CPU, MLX's quantized matrix products are slow whatever the BLAS, and bfloat16 / float16
ones slower still, while a dense float32 product goes to `cblas_sgemm` (OpenBLAS, see
`fast_blas`): a prompt is read 10-20x faster, a reply decoded 2-3x faster. So at load time a
quantized, bfloat16 or float16 model becomes float32 (quantized layers dequantized with mlx-lm's
own `dequantize_model`) under a policy:

* "auto": when MLX's default device is the CPU and the float32 weights take at most a share of
  the RAM (a quarter by default) and fit the memory available now;
* "always": whenever the default device is the CPU, whatever the size;
* "never": the weights stay as stored.

On a GPU nothing changes. The form running is a label for the app ("float32 (from 4-bit)",
"4-bit", "bfloat16") that also keys saved caches (`inference.cache.key`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import mlx.core as mx
import mlx.nn as nn
import psutil
from mlx.utils import tree_flatten
from mlx_lm.models.switch_layers import QuantizedSwitchLinear
from mlx_lm.utils import dequantize_model

from inference.cpu.layout_choice import NOT_APPLICABLE, LayoutChoice, LayoutRequest, choose_layout
from inference.cpu.weight_layout import transpose_for_blas

POLICIES = ("auto", "always", "never")
DEFAULT_POLICY = "auto"
DEFAULT_SHARE = 0.25
_QUANTIZED = (nn.QuantizedLinear, nn.QuantizedEmbedding, QuantizedSwitchLinear)


def stored_form(model: nn.Module, config: dict[str, Any]) -> str:
    """How the weights are stored: "4-bit" (the most common bits of a quantized model) or the
    dtype most of the floating-point weights have ("bfloat16", "float32"...)."""
    if any(isinstance(m, _QUANTIZED) for _, m in model.named_modules()):
        match config.get("quantization"):
            case {"bits": int() as bits}:
                return f"{bits}-bit"
            case _:
                return "quantized"
    counts: Counter[str] = Counter()
    for _, array in tree_flatten(model.parameters()):
        if mx.issubdtype(array.dtype, mx.floating):
            counts[_dtype_name(array.dtype)] += array.size
    return counts.most_common(1)[0][0] if counts else "float32"


def float32_bytes(model: nn.Module) -> int:
    """The bytes the weights would take in float32 (a quantized layer's packed weight counts
    as the full matrix it stands for)."""
    total = 0
    for _, module in model.named_modules():
        own = {k: v for k, v in module.items() if isinstance(v, mx.array)}
        if isinstance(module, _QUANTIZED):
            total += own.pop("scales").size * module.group_size * 4
            own.pop("weight", None)
            own.pop("biases", None)
        for array in own.values():
            floating = mx.issubdtype(array.dtype, mx.floating)
            total += array.size * 4 if floating else array.nbytes
    return total


def on_cpu() -> bool:
    """Whether MLX computes on the CPU by default (no GPU, or the CPU chosen)."""
    return mx.default_device().type == mx.cpu


def should_convert(
    policy: str,
    model: nn.Module,
    *,
    cpu: bool | None = None,
    total_ram: int | None = None,
    available: int | None = None,
    share: float = DEFAULT_SHARE,
) -> bool:
    """Whether `policy` turns this model into float32 here (see the module's docstring)."""
    if policy not in POLICIES:
        raise ValueError(f"Unknown weights policy {policy!r}; choose one of {', '.join(POLICIES)}.")
    if policy == "never" or not (on_cpu() if cpu is None else cpu):
        return False
    if policy == "always":
        return True
    memory = psutil.virtual_memory()
    ram = memory.total if total_ram is None else total_ram
    free = memory.available if available is None else available
    return float32_bytes(model) <= min(ram * share, free)


def to_float32(model: nn.Module, config: dict[str, Any]) -> str:
    """Turn the model's weights into float32 in place; returns the new form's label."""
    before = stored_form(model, config)
    if before == "float32":
        return before
    dequantize_model(model)
    model.set_dtype(mx.float32)
    mx.eval(model.parameters())  # pyright: ignore[reportUnknownMemberType]  # mlx stub: eval(*args) untyped
    return f"float32 (from {before})"


def apply_policy(
    model: nn.Module, config: dict[str, Any], policy: str, layout: LayoutRequest
) -> tuple[str, LayoutChoice]:
    """The weights' form after `policy` (converted where it says so, else as stored), and the
    layout of its float32 matrices: on the CPU the faster one for this machine (`layout_choice`),
    carried out by `weight_layout`."""
    convert = should_convert(policy, model)
    form = to_float32(model, config) if convert else stored_form(model, config)
    choice = choose_layout(model, layout) if on_cpu() else NOT_APPLICABLE
    if choice.transposed:
        transpose_for_blas(model)
    return form, choice


def _dtype_name(dtype: mx.Dtype) -> str:
    return str(dtype).removeprefix("mlx.core.")
