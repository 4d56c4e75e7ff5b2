"""The memory a library model's weights will take once loaded, under the CPU preference.

On MLX's CPU backend (Linux without MLX's CUDA package) a quantized, bfloat16 or float16 model
may run as float32 (inference/cpu/float32_weights.py): four bytes per parameter. The app checks
memory before loading, without MLX, so this mirrors that rule from the parameter count the
library reads off the safetensors headers.
"""

from __future__ import annotations

import sys
from importlib import metadata

import psutil

SHARE = 0.25  # inference.cpu.float32_weights.DEFAULT_SHARE: "auto" converts up to this
_CUDA_PACKAGES = ("mlx-cuda-12", "mlx-cuda-13")


def cpu_backend() -> bool:
    """Whether MLX will compute on the CPU here: Linux without MLX's CUDA package."""
    if not sys.platform.startswith("linux"):
        return False
    for name in _CUDA_PACKAGES:
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        return False
    return True


def running_weights_bytes(
    stored_bytes: int,
    parameters: int | None,
    policy: str,
    *,
    cpu: bool | None = None,
    total_ram: int | None = None,
    available: int | None = None,
) -> int:
    """The weights' memory once loaded: float32 (4 bytes a parameter) where `policy` ("auto",
    "always", "never") converts them on the CPU, else their stored size. "auto" converts only
    what fits both its share of the RAM and the memory `available`, so it never refuses a
    model the stored form would run."""
    if policy == "never" or not parameters or not (cpu_backend() if cpu is None else cpu):
        return stored_bytes
    as_float32 = max(stored_bytes, parameters * 4)
    if policy == "always":
        return as_float32
    memory = psutil.virtual_memory()
    ram = memory.total if total_ram is None else total_ram
    free = memory.available if available is None else available
    return as_float32 if as_float32 <= min(ram * SHARE, free) else stored_bytes
