"""Bounds checks of a GGUF file's header, in plain Python, before any native loader reads it.

MLX's GGUF loader trusts the counts and lengths in the header: a tensor count, a metadata count
or a string length of 2**47 makes it read far past its buffers and the process dies with
SIGSEGV. This module walks the whole header (metadata, tensor table) the way the GGUF
specification lays it out and checks every count, length, type id and tensor extent against the
file's size, so a damaged or hostile file is refused with a message instead. The type tables
(value types, tensor types and their block sizes) are the `gguf` package's, i.e. llama.cpp's.
"""

from __future__ import annotations

import mmap
import struct
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from gguf import GGML_QUANT_SIZES, GGUF_DEFAULT_ALIGNMENT, GGMLQuantizationType, GGUFValueType

from inference.errors import ModelLoadError

_MAGIC = b"GGUF"
# Version 1 had 32-bit counts; 2 and 3 share this layout (3 added big-endian files, refused
# below because their version reads as a huge number).
_VERSIONS = (2, 3)
_FIXED_SIZES = {
    GGUFValueType.UINT8: 1,
    GGUFValueType.INT8: 1,
    GGUFValueType.BOOL: 1,
    GGUFValueType.UINT16: 2,
    GGUFValueType.INT16: 2,
    GGUFValueType.UINT32: 4,
    GGUFValueType.INT32: 4,
    GGUFValueType.FLOAT32: 4,
    GGUFValueType.UINT64: 8,
    GGUFValueType.INT64: 8,
    GGUFValueType.FLOAT64: 8,
}
# The specification caps keys at 65535 bytes; ggml caps tensor names at 63 (GGML_MAX_NAME) and
# dimensions at 4 (GGML_MAX_DIMS).
_MAX_KEY = 65535
_MAX_NAME = 63
_MAX_DIMS = 4
# MLX keeps each dimension in an int32.
_MAX_DIM = 2**31 - 1
# The smallest a metadata entry (key length, empty key, type, one byte) and a tensor entry (name
# length, n_dims, one dimension, type, offset) can be: a count above size / this cannot be true.
_MIN_ENTRY = 8 + 4 + 1
_MIN_TENSOR = 8 + 4 + 8 + 4 + 8


class _Damaged(Exception):
    """A structural fault; `check_gguf` adds the file's name and turns it into ModelLoadError."""


@dataclass(frozen=True)
class GGUFLayout:
    """What the checked header says: its counts and how many bytes the tensors take."""

    version: int
    metadata_count: int
    tensor_count: int
    tensor_bytes: int


def check_gguf(path: Path) -> GGUFLayout:
    """Check the GGUF header of `path` against its size; ModelLoadError names the first fault."""
    try:
        with path.open("rb") as file:
            size = path.stat().st_size
            if size < 24:
                raise _Damaged(f"it is only {size} bytes long, too short for a GGUF header")
            with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _Reader(data, size).layout()
    except OSError as error:
        raise ModelLoadError(f"{path} could not be read: {error.strerror or error}") from error
    except _Damaged as fault:
        raise ModelLoadError(
            f"{path.name} is damaged or incomplete ({fault}). Was the download cut short?"
        ) from None


class _Reader:
    def __init__(self, data: mmap.mmap, size: int) -> None:
        self.data = data
        self.size = size
        self.pos = 0

    def take(self, count: int, what: str) -> int:
        """Claim `count` bytes at the cursor; their start, or _Damaged past the file's end."""
        if count > self.size - self.pos:
            raise _Damaged(
                f"{what} needs {count:,} bytes at offset {self.pos:,}, past the end of the "
                f"{self.size:,}-byte file"
            )
        start = self.pos
        self.pos += count
        return start

    def number(self, form: str, what: str) -> int:
        start = self.take(struct.calcsize(form), what)
        return struct.unpack_from(form, self.data, start)[0]

    def string(self, what: str, limit: int) -> str:
        length = self.number("<Q", f"the length of {what}")
        if length > limit:
            raise _Damaged(f"{what} claims to be {length:,} bytes long (at most {limit:,})")
        start = self.take(length, what)
        try:
            return self.data[start : start + length].decode("utf-8")
        except UnicodeDecodeError as error:
            raise _Damaged(f"{what} is not UTF-8 text") from error

    def count(self, what: str, entry_bytes: int) -> int:
        """A header count (`what` in the plural), at most what the rest of the file can hold."""
        value = self.number("<Q", f"the number of {what}")
        if value > (self.size - self.pos) // entry_bytes:
            raise _Damaged(f"it claims {value:,} {what}, more than its size can hold")
        return value

    def value_type(self, what: str) -> GGUFValueType:
        raw = self.number("<I", f"the type of {what}")
        try:
            return GGUFValueType(raw)
        except ValueError:
            raise _Damaged(f"{what} has the unknown value type {raw}") from None

    def skip_value(self, kind: GGUFValueType, what: str) -> None:
        if kind == GGUFValueType.STRING:
            self.skip_string(what)
        elif kind == GGUFValueType.ARRAY:
            element = self.value_type(f"the elements of {what}")
            if element == GGUFValueType.ARRAY:
                raise _Damaged(f"{what} is a list of lists, which no model file uses")
            length = self.number("<Q", f"the length of {what}")
            if element == GGUFValueType.STRING:
                if length > (self.size - self.pos) // 8:
                    raise _Damaged(f"{what} claims {length:,} strings, more than the file holds")
                for _ in range(length):
                    self.skip_string(what)
            else:
                self.take(length * _FIXED_SIZES[element], what)
        else:
            self.take(_FIXED_SIZES[kind], what)

    def skip_string(self, what: str) -> None:
        length = self.number("<Q", f"the length of a string in {what}")
        self.take(length, f"a string in {what}")

    def layout(self) -> GGUFLayout:
        if self.data[:4] != _MAGIC:
            raise _Damaged("it does not start with 'GGUF'")
        self.pos = 4
        version = self.number("<I", "the version")
        if version not in _VERSIONS:
            raise _Damaged(f"it has GGUF version {version}; Branchwise reads versions 2 and 3")
        tensor_count = self.count("tensors", _MIN_TENSOR)
        metadata_count = self.count("metadata entries", _MIN_ENTRY)
        alignment = GGUF_DEFAULT_ALIGNMENT
        for index in range(metadata_count):
            key = self.string(f"metadata key {index + 1}", _MAX_KEY)
            kind = self.value_type(f"'{key}'")
            if key == "general.alignment":
                alignment = self.alignment(kind)
            else:
                self.skip_value(kind, f"'{key}'")
        extents = [self.tensor(index) for index in range(tensor_count)]
        data_start = -(-self.pos // alignment) * alignment
        tensor_bytes = self.check_extents(extents, data_start, alignment)
        return GGUFLayout(version, metadata_count, tensor_count, tensor_bytes)

    def alignment(self, kind: GGUFValueType) -> int:
        if kind != GGUFValueType.UINT32:
            raise _Damaged("'general.alignment' is not a 32-bit number")
        value = self.number("<I", "'general.alignment'")
        if value == 0 or value & (value - 1):
            raise _Damaged(f"'general.alignment' is {value}, not a power of two")
        return value

    def tensor(self, index: int) -> tuple[str, int, int]:
        """One tensor table entry: (name, offset in the data section, size in bytes)."""
        name = self.string(f"the name of tensor {index + 1}", _MAX_NAME)
        dims = self.number("<I", f"the dimension count of tensor '{name}'")
        if not 1 <= dims <= _MAX_DIMS:
            raise _Damaged(f"tensor '{name}' has {dims:,} dimensions (1 to {_MAX_DIMS})")
        shape = [self.number("<Q", f"the shape of tensor '{name}'") for _ in range(dims)]
        if any(not 1 <= extent <= _MAX_DIM for extent in shape):
            raise _Damaged(f"tensor '{name}' has the impossible shape {shape}")
        raw_type = self.number("<I", f"the type of tensor '{name}'")
        try:
            block, block_bytes = GGML_QUANT_SIZES[GGMLQuantizationType(raw_type)]
        except (ValueError, KeyError):
            raise _Damaged(f"tensor '{name}' has the unknown type id {raw_type}") from None
        if shape[0] % block:
            raise _Damaged(f"tensor '{name}' has rows of {shape[0]}, not whole blocks of {block}")
        elements = 1
        for extent in shape:
            elements *= extent
        offset = self.number("<Q", f"the offset of tensor '{name}'")
        return name, offset, elements // block * block_bytes

    def check_extents(
        self, extents: list[tuple[str, int, int]], data_start: int, alignment: int
    ) -> int:
        """Every tensor aligned, inside the file and apart from the others; their total bytes."""
        twice = [name for name, seen in Counter(n for n, _, _ in extents).items() if seen > 1]
        if twice:
            raise _Damaged(f"the tensor '{twice[0]}' is listed twice")
        end_before, name_before = 0, ""
        for name, offset, length in sorted(extents, key=lambda extent: extent[1]):
            if offset % alignment:
                raise _Damaged(
                    f"tensor '{name}' starts at {offset:,}, not on a {alignment}-byte boundary"
                )
            if data_start + offset + length > self.size:
                raise _Damaged(f"tensor '{name}' runs past the end of the file")
            if offset < end_before:
                raise _Damaged(f"tensors '{name_before}' and '{name}' overlap")
            end_before, name_before = offset + length, name
        return sum(length for _, _, length in extents)
