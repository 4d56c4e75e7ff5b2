"""Read a GGUF file's metadata and tensors as MLX arrays.

MLX reads GGUF natively (`mx.load`) and keeps Q4_0, Q4_1 and Q8_0 tensors quantized, as
`<name>.weight` (packed uint32) / `.scales` / `.biases` in its affine layout with groups of 32;
F32, F16 and BF16 tensors come through as they are. It is fast (the 135M SmolLM2 file reads in a
fraction of a second) but refuses a whole file when one tensor has another type (K-quants, IQ
types, Q5_0...). Such files are read from the checked header and a memory map instead
(`inference.importing.gguf_tensors`): Q5_0, Q5_1, Q4_K and Q5_K arrive exactly as the file holds
them, the other types dequantized to float16 (`inference.importing.gguf_support` says which and
what it costs on the disk).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import mlx.core as mx

from inference.errors import ModelLoadError
from inference.importing.gguf_check import GGUFHeader, check_gguf
from inference.importing.gguf_support import GROUP_SIZE, imported_bytes
from inference.importing.gguf_tensors import TensorProgress, Tensors, read_tensors
from inference.loading.file_limits import require_memory

__all__ = ["GROUP_SIZE", "GGUFFile", "Tensors", "open_gguf"]

_MAGIC = b"GGUF"


@dataclass(frozen=True)
class GGUFFile:
    """A GGUF file opened for import: its metadata now, its tensors on demand."""

    metadata: dict[str, Any]
    header: GGUFHeader
    read_tensors: Callable[[TensorProgress], Tensors]

    @property
    def tensor_count(self) -> int:
        return self.header.tensor_count


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
    header = check_gguf(path)
    require_memory(max(header.tensor_bytes, imported_bytes(header)), f"Importing {path.name}")
    try:
        loaded = mx.load(str(path), format="gguf", return_metadata=True)
        # With metadata asked for: (arrays, metadata); mlx's stub has one type for all forms.
        tensors, metadata = cast("tuple[Tensors, dict[str, Any]]", loaded)
    except (RuntimeError, ValueError):
        # A type MLX does not read: from the checked header and a memory map instead.
        return GGUFFile(
            header.metadata, header, lambda progress: read_tensors(path, header, progress)
        )
    plain = {key: _plain(value) for key, value in metadata.items()}
    count = header.tensor_count  # MLX splits each quantized tensor in three: count the file's
    return GGUFFile(plain, header, lambda progress: _report_all(tensors, count, progress))


def _report_all(tensors: Tensors, count: int, progress: TensorProgress) -> Tensors:
    progress(count, count)
    return tensors


def _plain(value: Any) -> Any:
    """MLX returns numbers as arrays; the importer wants Python values."""
    if isinstance(value, mx.array):
        return value.item() if value.ndim == 0 else value.tolist()
    return value
