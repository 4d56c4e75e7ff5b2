"""Float32 weight matrices kept transposed on the CPU: replies decode about 1.3x faster.

A linear layer computes `x @ weight.T` with `weight` stored (out, in), row after row, and MLX
hands that product to `cblas_sgemm` with the weight marked transposed. For one input row (every
decode step) OpenBLAS then spends most of the product copying the weight into packed panels
(`sgemm_itcopy` took 29% of a decode step's samples here, the multiply kernel itself 19%). Kept
as the transposed view of an (in, out) array, the same `weight.T` is a plain row-major matrix
that BLAS streams as it lies: SmolLM2 in float32 decoded 14.8 -> 18.5 tokens/s on OpenBLAS's
Haswell kernels and 19.7 -> 26.0 on its Cooperlake ones, with the bundled BLAS 13 -> 19,
prompts as fast as before (one process, sides alternated). Every layer still sees the same
shape and values; only the strides differ, so mlx-lm's model code runs unchanged.

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
        if weight.ndim != 2 or weight.dtype != mx.float32 or _column_major(weight):
            continue
        module["weight"] = mx.contiguous(weight.T).T
        mx.eval(module["weight"])  # pyright: ignore[reportUnknownMemberType]  # mlx stub: eval(*args) untyped
        changed += 1
    return changed


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


def _column_major(array: mx.array) -> bool:
    """Whether a 2-D array is stored column after column (the transposed view of a row-major
    array), read off its buffer's strides."""
    rows, columns = array.shape
    if rows == 1 or columns == 1:
        return False
    return memoryview(array).strides == (array.itemsize, array.itemsize * rows)
