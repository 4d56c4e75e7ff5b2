"""Float32 weight matrices kept transposed on the CPU, where that decodes faster.

A linear layer computes `x @ weight.T` with `weight` stored (out, in), row after row, and MLX
hands that product to `cblas_sgemm` with the weight marked transposed. Kept as the transposed
view of an (in, out) array, the same `weight.T` is a plain row-major matrix that BLAS streams as
it lies. Which of the two runs faster for one input row differs between CPUs (with the same
OpenBLAS kernels, the transposed form decoded SmolLM2 about 1.3x faster on an AMD Zen 5 VM and
about 1.3x slower on an AMD Zen 4 one), so `layout_choice` measures it at load and this module
only carries it out. Every layer still sees the same shape and values; only the
strides differ, so mlx-lm's model code runs unchanged.

The tied embedding (a model without an `lm_head`) is the output projection too, so it is
turned as well; looking up a prompt's rows in it then reads strided memory, about 10 us per
token, nothing beside the product it speeds up. An untied model's embedding stays as it is.
"""

from __future__ import annotations

import mlx.core as mx
import mlx.nn as nn

TRANSPOSED = "float32 matrices transposed for BLAS"
AS_STORED = "as stored"


def transpose_for_blas(model: nn.Module) -> int:
    """Keep every float32 matrix a product reads (linear layers, a tied embedding) as the
    transposed view of an (in, out) array; returns how many changed. Each is evaluated at
    once, so the old copy is freed before the next one is made."""
    changed = 0
    for module in _product_modules(model):
        weight = module["weight"]
        if not _lies_as_stored(weight):
            continue
        module["weight"] = mx.contiguous(weight.T).T
        mx.eval(module["weight"])  # pyright: ignore[reportUnknownMemberType]  # mlx stub: eval(*args) untyped
        changed += 1
    return changed


def stored_matrices(model: nn.Module) -> list[mx.array]:
    """The float32 matrices a product reads (as `transpose_for_blas` picks them) that still lie
    as stored."""
    return [m["weight"] for m in _product_modules(model) if _lies_as_stored(m["weight"])]


def layout(model: nn.Module) -> str:
    """How the model's float32 matrices lie: TRANSPOSED or AS_STORED (saved caches are keyed
    by it: other strides, other summation order in BLAS, other rounding)."""
    for module in _product_modules(model):
        weight = module["weight"]
        if weight.ndim == 2 and weight.dtype == mx.float32 and _column_major(weight):
            return TRANSPOSED
    return AS_STORED


def _product_modules(model: nn.Module) -> list[nn.Module]:
    untied = isinstance(getattr(model, "lm_head", None), nn.Linear)
    kinds: tuple[type, ...] = (nn.Linear,) if untied else (nn.Linear, nn.Embedding)
    return [
        module
        for _, module in model.named_modules()
        if type(module) in kinds and isinstance(module.get("weight"), mx.array)
    ]


def _lies_as_stored(weight: mx.array) -> bool:
    return weight.ndim == 2 and weight.dtype == mx.float32 and not _column_major(weight)


def _column_major(array: mx.array) -> bool:
    """Whether a 2-D array is stored column after column (the transposed view of a row-major
    array), read off its buffer's strides."""
    rows, columns = array.shape
    if rows == 1 or columns == 1:
        return False
    return memoryview(array).strides == (array.itemsize, array.itemsize * rows)
