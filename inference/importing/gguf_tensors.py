"""GGUF tensors read from the file's bytes and turned into MLX arrays, each type the closest way
MLX can hold it (the table is `inference.importing.gguf_support`'s).

A type that is affine in groups of 32 values (value = scale × code + bias, the codes a few bits
each) becomes MLX's quantized layout with exactly the file's codes, scales and biases: the
model computes with the very weights llama.cpp computes with. The codes are recovered from the
`gguf` package's own dequantization (llama.cpp's reference code in numpy) and the block headers'
scales, so no block layout is unpacked twice. Any other type is dequantized to float16.

The file is read through a memory map, a slice of rows at a time, so a large tensor never needs
its float32 form in memory whole.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import mlx.core as mx
import numpy as np
from gguf import GGML_QUANT_SIZES
from gguf import GGMLQuantizationType as Type
from gguf.quants import Q4_K, dequantize

from inference.errors import ModelLoadError
from inference.importing.gguf_check import GGUFHeader, TensorEntry
from inference.importing.gguf_support import EXACT_TYPES, GROUP_SIZE, READABLE_TYPES

Tensors = dict[str, mx.array]
# (tensors done, tensors in total); raises to cancel.
TensorProgress = Callable[[int, int], None]

# Rows converted at once: about this many values (a float32 copy of 64 MB).
_CHUNK_VALUES = 16 * 1024 * 1024
# A code's offset from zero in the types stored without a minimum: value = (code - offset) × d.
_OFFSETS = {Type.Q4_0: 8, Type.Q5_0: 16, Type.Q8_0: 128}


def read_tensors(path: Path, header: GGUFHeader, progress: TensorProgress) -> Tensors:
    """Every tensor of the checked file `path`, by its GGUF name, as MLX arrays."""
    tensors: Tensors = {}
    # numpy's own map: it stays open while a view of it lives (MLX copies what it is given).
    data = np.memmap(path, np.uint8, mode="r")
    for done, entry in enumerate(header.tensors, start=1):
        start = header.data_start + entry.offset
        tensors.update(convert(entry, data[start : start + entry.nbytes]))
        progress(done, len(header.tensors))
    return tensors


def convert(entry: TensorEntry, raw: np.ndarray) -> Tensors:
    """One tensor from its bytes: float types as they are, affine types exactly in MLX's
    quantized layout, the rest dequantized to float16."""
    shape = tuple(reversed(entry.shape))  # GGUF lists the fastest-varying dimension first
    if entry.kind not in READABLE_TYPES:
        raise ModelLoadError(
            f"Tensor '{entry.name}' uses the GGUF type {entry.kind.name}, which Branchwise "
            "cannot read."
        )
    if entry.kind == Type.F32:
        return {entry.name: mx.array(raw.view(np.float32).reshape(shape))}
    if entry.kind == Type.F16:
        return {entry.name: mx.array(raw.view(np.float16).reshape(shape))}
    if entry.kind == Type.BF16:
        return {entry.name: mx.array(raw.view(np.uint16).reshape(shape)).view(mx.bfloat16)}
    rows = raw.reshape(-1, _row_bytes(entry))
    if entry.kind in EXACT_TYPES and len(shape) == 2:
        return _affine(entry.name, entry.kind, rows, shape[-1])
    values = np.concatenate([dequantize(part, entry.kind) for part in _chunks(rows, shape[-1])])
    return {entry.name: mx.array(values.reshape(shape).astype(np.float16))}


def _row_bytes(entry: TensorEntry) -> int:
    block, block_bytes = GGML_QUANT_SIZES[entry.kind]
    return entry.shape[0] // block * block_bytes


def _chunks(rows: np.ndarray, columns: int) -> list[np.ndarray]:
    step = max(1, _CHUNK_VALUES // columns)
    return [rows[i : i + step] for i in range(0, rows.shape[0], step)]


def _affine(name: str, kind: Type, rows: np.ndarray, columns: int) -> Tensors:
    bits, float32_scales = EXACT_TYPES[kind]
    packed: list[np.ndarray] = []
    scales: list[np.ndarray] = []
    biases: list[np.ndarray] = []
    for part in _chunks(rows, columns):
        scale, bias = _group_scales(kind, part)
        if kind == Type.Q8_0:  # the codes are the block's bytes: no need to dequantize them
            signed = part.reshape(-1, GGML_QUANT_SIZES[kind][1])[:, 2:].view(np.int8)
            codes = (signed.astype(np.int16) + 128).astype(np.uint8)
        else:
            values = dequantize(part, kind).reshape(-1, GROUP_SIZE)
            safe = np.where(scale == 0, 1, scale)
            codes = np.rint((values - bias[:, None]) / safe[:, None])
            codes = np.where(scale[:, None] == 0, 0, codes)
            codes = np.clip(codes, 0, 2**bits - 1).astype(np.uint8)
        packed.append(_pack(codes.reshape(part.shape[0], columns), bits))
        scales.append(scale.reshape(part.shape[0], -1))
        biases.append(bias.reshape(part.shape[0], -1))
    # The token embedding's scales set the dtype the whole model computes in (its output is the
    # first activation): float32, as llama.cpp computes, rather than float16 (measured on Gemma 3
    # 270M: float16 activations part from llama.cpp's greedy tokens within 16 where float32 do
    # not).
    wide = float32_scales or name == "token_embd.weight"
    dtype = np.float32 if wide else np.float16
    base = name.removesuffix(".weight")
    return {
        f"{base}.weight": mx.array(np.concatenate(packed)),
        f"{base}.scales": mx.array(np.concatenate(scales).astype(dtype)),
        f"{base}.biases": mx.array(np.concatenate(biases).astype(dtype)),
    }


def _group_scales(kind: Type, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each group of 32 values' scale and bias (float32), read from the block headers."""
    block_bytes = GGML_QUANT_SIZES[kind][1]
    blocks = rows.reshape(-1, block_bytes)
    d = blocks[:, 0:2].copy().view(np.float16).astype(np.float32).ravel()
    if kind in (Type.Q4_K, Type.Q5_K):
        minimum = blocks[:, 2:4].copy().view(np.float16).astype(np.float32)
        factors, minima = Q4_K.get_scale_min(blocks[:, 4:16].copy())
        scale = d[:, None] * factors.astype(np.float32)
        return scale.ravel(), (-minimum * minima.astype(np.float32)).ravel()
    if kind in (Type.Q4_1, Type.Q5_1):
        return d, blocks[:, 2:4].copy().view(np.float16).astype(np.float32).ravel()
    return d, -_OFFSETS[kind] * d


def _pack(codes: np.ndarray, bits: int) -> np.ndarray:
    """Codes of `bits` bits each, packed as MLX packs them: a little-endian stream of bits in
    uint32 words (8 codes a word at 4 bits, 32 codes in 5 words at 5 bits)."""
    rows, columns = codes.shape
    if bits == 8:  # four codes a word, the first in the lowest byte: the bytes as they lie
        return np.ascontiguousarray(codes).view("<u4")
    stream = np.unpackbits(codes[..., None], axis=-1, bitorder="little")[..., :bits]
    return np.packbits(stream.reshape(rows, columns * bits), axis=-1, bitorder="little").view(
        np.uint32
    )
