"""Read a GGUF file's metadata and tensors as MLX arrays.

MLX reads GGUF natively (`mx.load`) and keeps Q4_0, Q4_1 and Q8_0 tensors quantized, as
`<name>.weight` (packed uint32) / `.scales` / `.biases` in its affine layout with groups of 32;
F32, F16 and BF16 tensors come through as they are. It is fast (the 135M SmolLM2 file reads in a
fraction of a second) but refuses a whole file when one tensor has another type (K-quants, IQ
types, Q5_0...). Such files are read with the `gguf` package instead: each of those tensors is
dequantized with numpy and quantized again with MLX. MLX's groups of 32 do not line up with the
source's own grid, so re-quantizing at the same width would roughly double the rounding error;
a wider grid keeps the model close to the file: 5- to 8-bit sources become 8-bit, 4-bit ones
6-bit, and 1- to 3-bit ones 4-bit (narrower MLX grids would distort them badly).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import mlx.core as mx
import numpy as np

from inference.errors import ModelLoadError
from inference.importing.gguf_check import check_gguf
from inference.loading.file_limits import require_memory

GROUP_SIZE = 32
_MAGIC = b"GGUF"

Tensors = dict[str, mx.array]
# (tensors done, tensors in total); raises to cancel.
TensorProgress = Callable[[int, int], None]


@dataclass(frozen=True)
class GGUFFile:
    """A GGUF file opened for import: its metadata now, its tensors on demand."""

    metadata: dict[str, Any]
    tensor_count: int
    read_tensors: Callable[[TensorProgress], Tensors]


def open_gguf(path: Path) -> GGUFFile:
    """Open `path`, raising ModelLoadError that says what is wrong with a bad file."""
    try:
        with path.open("rb") as file:
            magic = file.read(4)
    except OSError as error:
        raise ModelLoadError(f"{path} could not be read: {error.strerror or error}") from error
    if magic != _MAGIC:
        raise ModelLoadError(f"{path.name} is not a GGUF file (it does not start with 'GGUF').")
    # MLX's reader trusts the header's counts and lengths (a huge one crashes the process), and
    # reads every tensor into memory at once.
    layout = check_gguf(path)
    require_memory(layout.tensor_bytes, f"Importing {path.name}")
    try:
        loaded = mx.load(str(path), format="gguf", return_metadata=True)
        # With metadata asked for: (arrays, metadata); mlx's stub has one type for all forms.
        tensors, metadata = cast("tuple[Tensors, dict[str, Any]]", loaded)
    except (RuntimeError, ValueError) as error:
        return _open_with_gguf_package(path, error)
    plain = {key: _plain(value) for key, value in metadata.items()}
    return GGUFFile(plain, len(tensors), lambda progress: _report_all(tensors, progress))


def _report_all(tensors: Tensors, progress: TensorProgress) -> Tensors:
    progress(len(tensors), len(tensors))
    return tensors


def _plain(value: Any) -> Any:
    """MLX returns numbers as arrays; the importer wants Python values."""
    if isinstance(value, mx.array):
        return value.item() if value.ndim == 0 else value.tolist()
    return value


def _open_with_gguf_package(path: Path, mlx_error: Exception) -> GGUFFile:
    import gguf

    try:
        reader = gguf.GGUFReader(path)
        metadata = {name: field.contents() for name, field in reader.fields.items()}
    except (ValueError, IndexError, OSError) as error:
        raise ModelLoadError(
            f"{path.name} is damaged or incomplete (was the download cut short?): {mlx_error}"
        ) from error

    def read_tensors(progress: TensorProgress) -> Tensors:
        tensors: Tensors = {}
        for done, tensor in enumerate(reader.tensors, start=1):
            tensors.update(_convert(tensor.name, tensor.tensor_type, tensor.data))
            progress(done, len(reader.tensors))
        return tensors

    return GGUFFile(metadata, len(reader.tensors), read_tensors)


def _convert(name: str, kind: Any, data: np.ndarray) -> Tensors:
    """One GGUF tensor as MLX arrays: float types as they are, the rest quantized again."""
    from gguf import GGMLQuantizationType as Type
    from gguf.quants import dequantize

    if kind in (Type.F32, Type.F16):
        return {name: mx.array(np.asarray(data))}
    try:
        values = dequantize(data, kind)
    except NotImplementedError as error:
        raise ModelLoadError(
            f"Tensor '{name}' uses the GGUF type {kind.name}, which Branchwise cannot read."
        ) from error
    if kind == Type.BF16:
        return {name: mx.array(values).astype(mx.bfloat16)}
    digits = re.search(r"\d", kind.name)
    if digits is None or values.ndim != 2:
        raise ModelLoadError(f"Tensor '{name}' of GGUF type {kind.name} is not supported.")
    source_bits = int(digits.group())
    bits = 8 if source_bits >= 5 else 6 if source_bits == 4 else 4
    base = name.removesuffix(".weight")
    weight, scales, biases = mx.quantize(
        mx.array(values).astype(mx.float16), group_size=GROUP_SIZE, bits=bits
    )
    return {f"{base}.weight": weight, f"{base}.scales": scales, f"{base}.biases": biases}
