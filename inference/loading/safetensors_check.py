"""Bounds checks of a .safetensors file's header, in plain Python, before MLX reads it.

The format is an 8-byte little-endian header length, that many bytes of JSON describing each
tensor (dtype, shape, byte range in the data that follows), then the data. These are the checks
the `safetensors` library itself makes (header length limit, every tensor's range matching its
shape and dtype, the ranges tiling the data exactly), so a damaged or hostile header is refused
with a message instead of reaching a native reader.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any, TypeGuard, cast

from inference.errors import ModelLoadError

# The safetensors library's own limit (MAX_HEADER_SIZE).
MAX_HEADER_BYTES = 100_000_000
_DTYPE_BYTES = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "F8_E5M2": 1,
    "F8_E4M3": 1,
    "F8_E8M0": 1,
    "U16": 2,
    "I16": 2,
    "F16": 2,
    "BF16": 2,
    "U32": 4,
    "I32": 4,
    "F32": 4,
    "U64": 8,
    "I64": 8,
    "F64": 8,
    "C64": 8,
}
# MLX keeps each dimension in an int32.
_MAX_DIM = 2**31 - 1


class _Damaged(Exception):
    """A structural fault; `check_safetensors` turns it into ModelLoadError naming the file."""


def check_safetensors(path: Path) -> int:
    """Check the header of `path` against its size and return the bytes its tensors take."""
    try:
        size = path.stat().st_size
        with path.open("rb") as file:
            return _check(file.read(8), file, size)
    except OSError as error:
        raise ModelLoadError(f"{path} could not be read: {error.strerror or error}") from error
    except _Damaged as fault:
        raise ModelLoadError(
            f"{path.name} in {path.parent.name} is damaged or incomplete ({fault}). Was the "
            "download cut short?"
        ) from None


def _check(prefix: bytes, file: Any, size: int) -> int:
    if len(prefix) < 8:
        raise _Damaged(f"it is only {size} bytes long")
    (length,) = struct.unpack("<Q", prefix)
    if length > min(MAX_HEADER_BYTES, size - 8):
        raise _Damaged(f"its header claims {length:,} bytes, more than the file holds")
    try:
        header = json.loads(file.read(length))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise _Damaged(f"its header is not JSON: {error}") from None
    if not isinstance(header, dict):
        raise _Damaged("its header is not a JSON object")
    entries = cast("dict[str, object]", header)  # JSON: the keys are text
    entries.pop("__metadata__", None)
    ranges = sorted((_extent(name, entry), name) for name, entry in entries.items())
    end_before, name_before = 0, ""
    for (start, end), name in ranges:
        if start != end_before:
            what = "overlaps" if start < end_before else "leaves a gap after"
            raise _Damaged(f"tensor '{name}' {what} '{name_before or 'the header'}'")
        end_before, name_before = end, name
    if end_before != size - 8 - length:
        raise _Damaged(
            f"its tensors take {end_before:,} bytes but the file holds {size - 8 - length:,}"
        )
    return end_before


def _extent(name: str, entry: object) -> tuple[int, int]:
    """The byte range of one tensor, checked against its dtype and shape."""
    if not isinstance(entry, dict):
        raise _Damaged(f"the entry for '{name}' is not a JSON object")
    fields = cast("dict[str, object]", entry)
    dtype, shape, offsets = fields.get("dtype"), fields.get("shape"), fields.get("data_offsets")
    # Text first: a list or an object would not even hash for the lookup.
    if not isinstance(dtype, str) or dtype not in _DTYPE_BYTES:
        raise _Damaged(f"tensor '{name}' has the unknown dtype {dtype!r}")
    dims = _whole_numbers(shape)
    if dims is None or any(d > _MAX_DIM for d in dims):
        raise _Damaged(f"tensor '{name}' has the impossible shape {shape!r}")
    span = _whole_numbers(offsets)
    if span is None or len(span) != 2:
        raise _Damaged(f"tensor '{name}' has the impossible byte range {offsets!r}")
    start, end = span
    if end - start != math.prod(dims) * _DTYPE_BYTES[dtype]:
        raise _Damaged(f"tensor '{name}' has a byte range that does not fit its shape {shape}")
    return start, end


def _whole_numbers(value: object) -> list[int] | None:
    """A JSON list of whole numbers (0 or more) as such, else None."""
    if not isinstance(value, list):
        return None
    items = cast("list[object]", value)
    numbers = [item for item in items if _whole(item)]
    return numbers if len(numbers) == len(items) else None


def _whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
