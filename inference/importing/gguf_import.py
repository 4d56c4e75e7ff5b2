"""Turn a llama-family GGUF file into an MLX model folder that `load_model` reads.

The folder gets config.json (from the GGUF metadata), model.safetensors (tensors renamed to
mlx-lm's names, quantized tensors kept quantized) and a tokenizer rebuilt from the vocabulary.
Two details matter for exactness:

* llama.cpp's converter permutes the query and key weights of `llama` models into the
  interleaved RoPE layout, so their config says `rope_traditional: true`; qwen2/qwen3 files are
  not permuted and keep the default.
* Bits can differ per tensor (SmolLM2 stores its embedding in 8 bits and the rest in 4), so
  `quantization` in config.json names every module whose bits differ from the most common ones.

The import is atomic: everything is written into a hidden temporary folder inside the models
folder, checked by building the model from it with mlx-lm, and only then renamed into place. Any
failure, including a full disk or a cancel, removes the temporary folder and raises
ModelLoadError.
"""

from __future__ import annotations

import errno
import json
import re
import shutil
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import mlx.core as mx

from inference.errors import ModelLoadError
from inference.importing.gguf_reader import GROUP_SIZE, Tensors, open_gguf
from inference.importing.gguf_tokenizer import write_tokenizer
from inference.importing.model_folder import (
    Progress,
    reporter,
    write_model_folder,
)
from inference.loading.file_limits import check_config_values
from inference.loading.folder_check import check_builds
from inference.prompt.template_check import check_folder_template

# GGUF architecture -> (mlx-lm model_type, rope_traditional). These share llama's tensor names.
ARCHITECTURES: dict[str, tuple[str, bool]] = {
    "llama": ("llama", True),
    "qwen2": ("qwen2", False),
    "qwen3": ("qwen3", False),
}

_TOP_LEVEL = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}
_IN_BLOCK = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "attn_q_norm": "self_attn.q_norm",
    "attn_k_norm": "self_attn.k_norm",
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
# Metadata every file must have, beyond its tensors (`{arch}` is the architecture).
_REQUIRED = ("embedding_length", "block_count", "feed_forward_length", "attention.head_count")
# Steps besides reading the tensors: tokenizer, weights file, load check.
_OTHER_STEPS = 3


def import_gguf(
    gguf_path: str | Path,
    models_dir: str | Path,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """Import the GGUF file into a new folder inside `models_dir` and return that folder.

    `progress(done, total)` is called as the import advances (in steps); setting `cancel` stops
    it at the next step with ImportCancelled. Raises ModelLoadError, leaving nothing behind, when
    the file is not GGUF, damaged, of an architecture or type Branchwise cannot import, or when
    the disk is full.
    """
    source = Path(gguf_path).expanduser()
    report = reporter(progress, cancel)
    return write_model_folder(
        models_dir,
        _folder_name(source),
        source.name,
        lambda folder: _write_folder(source, folder, report),
        _space_needed(source),
    )


def _space_needed(source: Path) -> int:
    # The MLX folder is about as large as the GGUF; re-quantized types may grow a little.
    return int(source.stat().st_size * 1.1)


def _write_folder(source: Path, folder: Path, report: Progress) -> None:
    gguf = open_gguf(source)
    metadata = gguf.metadata
    architecture = str(metadata.get("general.architecture"))
    if architecture not in ARCHITECTURES:
        raise ModelLoadError(
            f"{source.name} is a '{architecture}' model; Branchwise imports GGUF files of the "
            f"architectures {', '.join(sorted(ARCHITECTURES))}."
        )
    missing = [key for key in _REQUIRED if f"{architecture}.{key}" not in metadata]
    if missing:
        raise ModelLoadError(f"{source.name} lacks the metadata {', '.join(missing)}.")
    total = gguf.tensor_count + _OTHER_STEPS
    report(0, total)
    # The tokenizer first: it is quick, and refuses a vocabulary it cannot rebuild or a chat
    # template that loops before the tensors are read (slow for types that need re-quantizing).
    write_tokenizer(metadata, folder, metadata.get(f"{architecture}.context_length"))
    check_folder_template(folder, source.name, "the metadata key tokenizer.chat_template")
    report(1, total)
    tensors = gguf.read_tensors(lambda done, _: report(1 + done, total))
    rope_factors = tensors.pop("rope_freqs.weight", None)
    weights = rename_tensors(tensors)
    if "model.embed_tokens.weight" not in weights:
        raise ModelLoadError(f"{source.name} has no token embedding (token_embd).")
    config = model_config(metadata, architecture, weights, rope_factors)
    # Before mlx-lm builds it: a layer count of 10**9 would take forever to build.
    check_config_values(config, f"The metadata of {source.name}")
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    try:
        mx.save_safetensors(str(folder / "model.safetensors"), weights, metadata={"format": "mlx"})  # pyright: ignore[reportUnknownMemberType]  # mlx stub: no return type
    except RuntimeError as error:
        # MLX reports a failed write without an errno; a full disk is by far the usual cause.
        full = shutil.disk_usage(folder).free < _space_needed(source)
        raise OSError(errno.ENOSPC if full else errno.EIO, str(error)) from error
    report(total - 1, total)
    check_builds(folder, source.name)
    report(total, total)


def mlx_name(gguf_name: str) -> str:
    """mlx-lm's name for a GGUF tensor (`blk.3.attn_q.weight` is
    `model.layers.3.self_attn.q_proj.weight`)."""
    module, _, parameter = gguf_name.rpartition(".")
    block = re.fullmatch(r"blk\.(\d+)\.(\w+)", module)
    if block and block.group(2) in _IN_BLOCK:
        return f"model.layers.{block.group(1)}.{_IN_BLOCK[block.group(2)]}.{parameter}"
    if module in _TOP_LEVEL:
        return f"{_TOP_LEVEL[module]}.{parameter}"
    raise ModelLoadError(
        f"The GGUF tensor '{gguf_name}' has no counterpart in a llama-family MLX model "
        "(this file has parts Branchwise cannot import)."
    )


def rename_tensors(tensors: Tensors) -> Tensors:
    return {mlx_name(name): value for name, value in tensors.items()}


def module_bits(weights: Tensors) -> dict[str, int]:
    """Bits per quantized module, from the packed width: columns x 32 / input features."""
    bits: dict[str, int] = {}
    for name, scales in weights.items():
        if name.endswith(".scales"):
            module = name.removesuffix(".scales")
            packed = weights[f"{module}.weight"].shape[-1]
            bits[module] = packed * 32 // (scales.shape[-1] * GROUP_SIZE)
    return bits


def quantization(weights: Tensors) -> dict[str, Any] | None:
    """The config's `quantization`: the most common bits, plus every module that differs."""
    bits = module_bits(weights)
    if not bits:
        return None
    usual = Counter(bits.values()).most_common(1)[0][0]
    config: dict[str, Any] = {"group_size": GROUP_SIZE, "bits": usual, "mode": "affine"}
    for module, width in sorted(bits.items()):
        if width != usual:
            config[module] = {"group_size": GROUP_SIZE, "bits": width, "mode": "affine"}
    return config


def model_config(
    metadata: dict[str, Any],
    architecture: str,
    weights: Tensors,
    rope_factors: mx.array | None = None,
) -> dict[str, Any]:
    """config.json for mlx-lm from the GGUF metadata (llama.cpp's `<arch>.*` keys)."""
    model_type, traditional = ARCHITECTURES[architecture]

    def get(key: str, default: Any = None) -> Any:
        return metadata.get(f"{architecture}.{key}", default)

    heads = get("attention.head_count")
    kv_heads = get("attention.head_count_kv", heads)
    if isinstance(heads, list) or isinstance(kv_heads, list):
        raise ModelLoadError("This GGUF has a different number of attention heads per layer.")
    hidden = get("embedding_length")
    head_dim = get("attention.key_length", hidden // heads)
    if get("rope.dimension_count", head_dim) != head_dim:
        raise ModelLoadError("This GGUF applies RoPE to part of each head, which is not supported.")
    scaling = get("rope.scaling.type", "none")
    if scaling not in ("none", "linear"):
        raise ModelLoadError(f"This GGUF uses '{scaling}' RoPE scaling, which is not supported.")
    config: dict[str, Any] = {
        "model_type": model_type,
        "hidden_size": hidden,
        "num_hidden_layers": get("block_count"),
        "intermediate_size": get("feed_forward_length"),
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "head_dim": head_dim,
        "rms_norm_eps": get("attention.layer_norm_rms_epsilon", 1e-5),
        "rope_theta": get("rope.freq_base", 10000.0),
        "rope_traditional": traditional,
        "max_position_embeddings": get("context_length"),
        "vocab_size": weights["model.embed_tokens.weight"].shape[0],
        "tie_word_embeddings": "lm_head.weight" not in weights,
        "bos_token_id": metadata.get("tokenizer.ggml.bos_token_id"),
        "eos_token_id": metadata.get("tokenizer.ggml.eos_token_id"),
    }
    if model_type == "llama":
        config["attention_bias"] = "model.layers.0.self_attn.q_proj.bias" in weights
    if scaling == "linear":
        config["rope_scaling"] = {"type": "linear", "factor": get("rope.scaling.factor")}
    if rope_factors is not None:
        config["rope_scaling"] = llama3_rope_scaling(rope_factors, config["rope_theta"], head_dim)
    if quant := quantization(weights):
        config["quantization"] = quant
    return config


def llama3_rope_scaling(factors: mx.array, base: float, head_dim: int) -> dict[str, Any]:
    """Llama 3.1 and later files store RoPE's per-frequency factors (the tensor `rope_freqs`)
    instead of the parameters they came from. Every Llama 3 release used the same parameters but
    for the factor, which is the largest of them; mlx-lm's own Llama3RoPE must then reproduce
    every factor in the file, or the file is refused."""
    from mlx_lm.models.rope_utils import Llama3RoPE

    scaling = {
        "rope_type": "llama3",
        "factor": factors.max().item(),
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }
    plain = base ** (mx.arange(0, head_dim, 2, dtype=mx.float32) / head_dim)
    rebuilt = Llama3RoPE(head_dim, base=base, scaling_config=scaling)._freqs / plain
    if rebuilt.shape != factors.shape or not mx.allclose(rebuilt, factors, rtol=1e-3).item():
        raise ModelLoadError("This GGUF's RoPE frequency factors are not Llama 3's; not supported.")
    return scaling


def _folder_name(source: Path) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", source.stem).strip(".-") or "imported-model"
