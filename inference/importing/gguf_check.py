"""A GGUF file's header read in plain Python, with bounds checks, before any native loader reads
the file.

MLX's GGUF loader trusts the counts and lengths in the header: a tensor count, a metadata count
or a string length of 2**47 makes it read far past its buffers and the process dies with
SIGSEGV. This module walks the whole header (metadata, tensor table) the way the GGUF
specification lays it out and checks every count, length, type id and tensor extent against the
file's size, so a damaged or hostile file is refused with a message instead. On the way it keeps
the metadata values (long lists only where asked for: a vocabulary is 100,000s of strings, and
the scan of a models folder needs none of them) and the tensor table, so the header is the one
place a GGUF's facts are read from. No MLX: the library scans model folders with it. The type
tables (value types, tensor types and their block sizes) are the `gguf` package's, i.e.
llama.cpp's.
"""

from __future__ import annotations

import mmap
import struct
from collections import Counter
from collections.abc import Container
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gguf import GGML_QUANT_SIZES, GGUF_DEFAULT_ALIGNMENT, GGMLQuantizationType, GGUFValueType

from inference.errors import ModelLoadError

_MAGIC = b"GGUF"
# Version 1 had 32-bit counts; 2 and 3 share this layout (3 added big-endian files, refused
# below because their version reads as a huge number).
_VERSIONS = (2, 3)
_LENGTH = struct.Struct("<Q")
_FORMS = {
    GGUFValueType.UINT8: "B",
    GGUFValueType.INT8: "b",
    GGUFValueType.BOOL: "B",
    GGUFValueType.UINT16: "H",
    GGUFValueType.INT16: "h",
    GGUFValueType.UINT32: "I",
    GGUFValueType.INT32: "i",
    GGUFValueType.FLOAT32: "f",
    GGUFValueType.UINT64: "Q",
    GGUFValueType.INT64: "q",
    GGUFValueType.FLOAT64: "d",
}
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


# Lists kept whole when asked for none by name: any list this short (a stop list, per-layer
# counts); a longer one is kept as its length only.
_SHORT_LIST = 64


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of the table: its name, its GGUF shape (fastest-varying dimension first),
    its type, and where its bytes lie (offset from the start of the data section)."""

    name: str
    shape: tuple[int, ...]
    kind: GGMLQuantizationType
    offset: int
    nbytes: int

    @property
    def elements(self) -> int:
        count = 1
        for extent in self.shape:
            count *= extent
        return count


@dataclass(frozen=True)
class GGUFHeader:
    """What the checked header says: its metadata, its tensors and where their data begins."""

    version: int
    metadata: dict[str, Any]
    tensors: tuple[TensorEntry, ...]
    data_start: int
    tensor_bytes: int
    # Lists left out of `metadata` (not asked for): their lengths.
    list_lengths: dict[str, int] = field(default_factory=dict[str, int])

    @property
    def metadata_count(self) -> int:
        return len(self.metadata) + len(self.list_lengths)

    @property
    def tensor_count(self) -> int:
        return len(self.tensors)


def check_gguf(path: Path, keep_lists: Container[str] | None = None) -> GGUFHeader:
    """Check the GGUF header of `path` against its size and return it; ModelLoadError names the
    first fault. Lists longer than a few entries are kept only when named in `keep_lists`
    (None keeps every list)."""
    try:
        with path.open("rb") as file:
            size = path.stat().st_size
            if size < 24:
                raise _Damaged(f"it is only {size} bytes long, too short for a GGUF header")
            with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _Reader(data, size, keep_lists).layout()
    except OSError as error:
        raise ModelLoadError(f"{path} could not be read: {error.strerror or error}") from error
    except _Damaged as fault:
        raise ModelLoadError(
            f"{path.name} is damaged or incomplete ({fault}). Was the download cut short?"
        ) from None


class _Reader:
    def __init__(self, data: mmap.mmap, size: int, keep_lists: Container[str] | None) -> None:
        self.data = data
        self.size = size
        self.pos = 0
        self.keep_lists = keep_lists

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

    def value(self, kind: GGUFValueType, what: str, key: str, lists: dict[str, int]) -> Any:
        """The value at the cursor; a list not kept is skipped and only its length recorded."""
        if kind == GGUFValueType.STRING:
            return self.string(what, self.size)
        if kind != GGUFValueType.ARRAY:
            return self.scalar(kind, what)
        element = self.value_type(f"the elements of {what}")
        if element == GGUFValueType.ARRAY:
            raise _Damaged(f"{what} is a list of lists, which no model file uses")
        length = self.number("<Q", f"the length of {what}")
        keep = length <= _SHORT_LIST or self.keep_lists is None or key in self.keep_lists
        if not keep:
            lists[key] = length
        if element == GGUFValueType.STRING:
            if length > (self.size - self.pos) // 8:
                raise _Damaged(f"{what} claims {length:,} strings, more than the file holds")
            return self.strings(length, what, keep)
        width = _FIXED_SIZES[element]
        start = self.take(length * width, what)
        if not keep:
            return None
        form = f"<{length}{_FORMS[element]}"
        values = list(struct.unpack_from(form, self.data, start))
        return [bool(v) for v in values] if element == GGUFValueType.BOOL else values

    def scalar(self, kind: GGUFValueType, what: str) -> Any:
        value = self.number(f"<{_FORMS[kind]}", what)
        return bool(value) if kind == GGUFValueType.BOOL else value

    def strings(self, count: int, what: str, keep: bool) -> list[str] | None:
        """`count` strings at the cursor (a vocabulary: 100,000s of them, hence the tight loop)."""
        data, size, pos = self.data, self.size, self.pos
        length_at = _LENGTH.unpack_from
        kept: list[str] = []
        for _ in range(count):
            if pos + 8 > size:
                raise _Damaged(f"a string in {what} runs past the end of the file")
            (length,) = length_at(data, pos)
            start, pos = pos + 8, pos + 8 + length
            if pos > size:
                raise _Damaged(f"a string in {what} runs past the end of the file")
            if keep:
                try:
                    kept.append(data[start:pos].decode("utf-8"))
                except UnicodeDecodeError as error:
                    raise _Damaged(f"a string in {what} is not UTF-8 text") from error
        self.pos = pos
        return kept if keep else None

    def layout(self) -> GGUFHeader:
        if self.data[:4] != _MAGIC:
            raise _Damaged("it does not start with 'GGUF'")
        self.pos = 4
        version = self.number("<I", "the version")
        if version not in _VERSIONS:
            raise _Damaged(f"it has GGUF version {version}; Branchwise reads versions 2 and 3")
        tensor_count = self.count("tensors", _MIN_TENSOR)
        metadata_count = self.count("metadata entries", _MIN_ENTRY)
        alignment = GGUF_DEFAULT_ALIGNMENT
        metadata: dict[str, Any] = {}
        lists: dict[str, int] = {}
        for index in range(metadata_count):
            key = self.string(f"metadata key {index + 1}", _MAX_KEY)
            kind = self.value_type(f"'{key}'")
            if key == "general.alignment":
                alignment = metadata[key] = self.alignment(kind)
                continue
            value = self.value(kind, f"'{key}'", key, lists)
            if key not in lists:
                metadata[key] = value
        tensors = tuple(self.tensor(index) for index in range(tensor_count))
        data_start = -(-self.pos // alignment) * alignment
        tensor_bytes = self.check_extents(tensors, data_start, alignment)
        return GGUFHeader(version, metadata, tensors, data_start, tensor_bytes, lists)

    def alignment(self, kind: GGUFValueType) -> int:
        if kind != GGUFValueType.UINT32:
            raise _Damaged("'general.alignment' is not a 32-bit number")
        value = self.number("<I", "'general.alignment'")
        if value == 0 or value & (value - 1):
            raise _Damaged(f"'general.alignment' is {value}, not a power of two")
        return value

    def tensor(self, index: int) -> TensorEntry:
        """One tensor table entry."""
        name = self.string(f"the name of tensor {index + 1}", _MAX_NAME)
        dims = self.number("<I", f"the dimension count of tensor '{name}'")
        if not 1 <= dims <= _MAX_DIMS:
            raise _Damaged(f"tensor '{name}' has {dims:,} dimensions (1 to {_MAX_DIMS})")
        shape = [self.number("<Q", f"the shape of tensor '{name}'") for _ in range(dims)]
        if any(not 1 <= extent <= _MAX_DIM for extent in shape):
            raise _Damaged(f"tensor '{name}' has the impossible shape {shape}")
        raw_type = self.number("<I", f"the type of tensor '{name}'")
        try:
            kind = GGMLQuantizationType(raw_type)
            block, block_bytes = GGML_QUANT_SIZES[kind]
        except (ValueError, KeyError):
            raise _Damaged(f"tensor '{name}' has the unknown type id {raw_type}") from None
        if shape[0] % block:
            raise _Damaged(f"tensor '{name}' has rows of {shape[0]}, not whole blocks of {block}")
        elements = 1
        for extent in shape:
            elements *= extent
        offset = self.number("<Q", f"the offset of tensor '{name}'")
        return TensorEntry(name, tuple(shape), kind, offset, elements // block * block_bytes)

    def check_extents(
        self, tensors: tuple[TensorEntry, ...], data_start: int, alignment: int
    ) -> int:
        """Every tensor aligned, inside the file and apart from the others; their total bytes."""
        twice = [name for name, seen in Counter(t.name for t in tensors).items() if seen > 1]
        if twice:
            raise _Damaged(f"the tensor '{twice[0]}' is listed twice")
        end_before, name_before = 0, ""
        for tensor in sorted(tensors, key=lambda tensor: tensor.offset):
            name, offset, length = tensor.name, tensor.offset, tensor.nbytes
            if offset % alignment:
                raise _Damaged(
                    f"tensor '{name}' starts at {offset:,}, not on a {alignment}-byte boundary"
                )
            if data_start + offset + length > self.size:
                raise _Damaged(f"tensor '{name}' runs past the end of the file")
            if offset < end_before:
                raise _Damaged(f"tensors '{name_before}' and '{name}' overlap")
            end_before, name_before = offset + length, name
        return sum(tensor.nbytes for tensor in tensors)
