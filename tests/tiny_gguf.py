"""Tiny GGUF files written the way llama.cpp's converter writes them, for import tests.

A tiny random-weight model is built with mlx-lm's own classes and written with the `gguf`
package: tensor names from gguf's own name table (llama.cpp's, independent of the importer),
query/key weights of llama models permuted into the interleaved RoPE layout exactly as
convert_hf_to_gguf.py does, the tokenizer as `tokenizer.ggml.*` metadata. Importing such a file
must give back the model it was written from.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gguf
import mlx.core as mx
import mlx.nn as nn
import numpy as np
from gguf import GGMLQuantizationType as Type
from mlx.utils import tree_flatten

from inference.models.registry import get_model_classes
from tests.tiny_models import CHATML_TEMPLATE, CONFIGS, build_tokenizer

# Scaled like tests/tiny_models.py, so greedy choices are not near-ties.
_OUTPUT_SCALE = 8.0
_ARCH = {
    "llama": gguf.MODEL_ARCH.LLAMA,
    "qwen2": gguf.MODEL_ARCH.QWEN2,
    "qwen3": gguf.MODEL_ARCH.QWEN3,
}


def tiny_model(model_type: str, **overrides: Any) -> tuple[nn.Module, dict[str, Any]]:
    """A random-weight `model_type` model with tests/tiny_models.py's llama dimensions."""
    config = {**CONFIGS["llama"], "model_type": model_type, **overrides}
    mx.random.seed(1)
    model_class, args_class = get_model_classes(config)
    model = model_class(args_class.from_dict(config))
    model.lm_head.weight = model.lm_head.weight * _OUTPUT_SCALE
    return model, config


def permute(weight: np.ndarray, heads: int) -> np.ndarray:
    """convert_hf_to_gguf.py's LlamaModel.permute: half-split RoPE rows -> interleaved rows."""
    return (
        weight.reshape(heads, 2, weight.shape[0] // heads // 2, *weight.shape[1:])
        .swapaxes(1, 2)
        .reshape(weight.shape)
    )


def _llama3_rope_factors(config: dict[str, Any]) -> np.ndarray:
    """convert_hf_to_gguf.py's LlamaModel.generate_extra_tensors for `rope_type: llama3`."""
    scaling = config["rope_scaling"]
    dims, base = config["head_dim"], config["rope_theta"]
    low_wavelen = scaling["original_max_position_embeddings"] / scaling["low_freq_factor"]
    high_wavelen = scaling["original_max_position_embeddings"] / scaling["high_freq_factor"]
    factors = []
    for freq in 1.0 / (base ** (np.arange(0, dims, 2, dtype=np.float32) / dims)):
        wavelen = 2 * np.pi / freq
        if wavelen < high_wavelen:
            factors.append(1)
        elif wavelen > low_wavelen:
            factors.append(scaling["factor"])
        else:
            smooth = (
                scaling["original_max_position_embeddings"] / wavelen - scaling["low_freq_factor"]
            ) / (scaling["high_freq_factor"] - scaling["low_freq_factor"])
            factors.append(1 / ((1 - smooth) / scaling["factor"] + smooth))
    return np.array(factors, dtype=np.float32)


def _tokenizer_metadata(writer: gguf.GGUFWriter, pre: str, chat_template: str) -> None:
    spec = json.loads(build_tokenizer().to_str())
    vocab: dict[str, int] = spec["model"]["vocab"]
    tokens = sorted(vocab, key=vocab.__getitem__)
    special = {added["content"] for added in spec["added_tokens"] if added["special"]}
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    writer.add_token_types([3 if token in special else 1 for token in tokens])
    writer.add_token_merges(merges)
    writer.add_eos_token_id(vocab["<|im_end|>"])
    writer.add_pad_token_id(vocab["<|endoftext|>"])
    writer.add_add_bos_token(False)
    writer.add_chat_template(chat_template)


def write_gguf(
    model: nn.Module,
    config: dict[str, Any],
    path: Path,
    qtype: Type = Type.F32,
    architecture: str | None = None,
    pre: str = "default",
    chat_template: str = CHATML_TEMPLATE,
) -> Path:
    """Write `model` as a GGUF file; matrices in `qtype`, norms and biases in F32."""
    architecture = architecture or config["model_type"]
    writer = gguf.GGUFWriter(path, architecture)
    add_hyperparameters(writer, config)
    _tokenizer_metadata(writer, pre, chat_template)
    if config.get("rope_scaling"):
        writer.add_tensor("rope_freqs.weight", _llama3_rope_factors(config))
    names = gguf.get_tensor_name_map(_ARCH.get(architecture, gguf.MODEL_ARCH.LLAMA), 99)
    for name, value in tree_flatten(model.parameters()):
        data = np.array(value.astype(mx.float32))
        if config["model_type"] == "llama" and name.endswith("q_proj.weight"):
            data = permute(data, config["num_attention_heads"])
        if config["model_type"] == "llama" and name.endswith("k_proj.weight"):
            data = permute(data, config["num_key_value_heads"])
        add_weight(writer, names.get_name(name, try_suffixes=(".weight", ".bias")), data, qtype)
    return finish(writer, path)


def add_weight(writer: gguf.GGUFWriter, name: str | None, data: np.ndarray, qtype: Type) -> None:
    """A tensor as llama.cpp's converter writes it: matrices in `qtype`, the rest float32."""
    assert name is not None, "gguf's name table has no name for this tensor"
    if data.ndim == 2 and qtype != Type.F32:
        try:
            packed = gguf.quants.quantize(data, qtype)
        except NotImplementedError:  # gguf cannot write this type: zeros, but well-formed
            shape = gguf.quants.quant_shape_to_byte_shape(data.shape, qtype)
            packed = np.zeros(shape, np.uint8)
        writer.add_tensor(name, packed, raw_shape=packed.shape, raw_dtype=qtype)
    else:
        writer.add_tensor(name, data)


def finish(writer: gguf.GGUFWriter, path: Path) -> Path:
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def add_hyperparameters(writer: gguf.GGUFWriter, config: dict[str, Any]) -> None:
    """The `<arch>.*` keys llama.cpp's converter writes for a model of mlx-lm's `config`."""
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_head_count_kv(config["num_key_value_heads"])
    writer.add_key_length(config["head_dim"])
    writer.add_value_length(config["head_dim"])
    writer.add_rope_dimension_count(config["head_dim"])
    writer.add_rope_freq_base(config["rope_theta"])
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])


def write_bare_gguf(path: Path, architecture: str) -> Path:
    """A well-formed GGUF of `architecture` with one tensor and no other metadata."""
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(path, architecture)
    writer.add_tensor("token_embd.weight", np.zeros((8, 32), np.float32))
    return finish(writer, path)
