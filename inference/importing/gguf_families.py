"""Each GGUF family as mlx-lm models it: its config.json from llama.cpp's metadata keys, its
tensor names, and the few values llama.cpp's converter changed on the way in.

Details that matter for exactness, each what llama.cpp itself does with the same file:

* llama.cpp's converter permutes the query and key weights of `llama` models (Llama, Mistral,
  Ministral, SmolLM) into the interleaved RoPE layout, so their config says
  `rope_traditional: true`; the other families are not permuted and keep the default.
* Gemma 3's converter stores every RMSNorm weight plus one (llama.cpp's norm multiplies by the
  weight; Gemma's by one plus the weight): one is taken off again for mlx-lm's Gemma 3. Its
  sliding-window layers use RoPE base 10,000 unless the file says otherwise, one layer in six is
  global unless the file says otherwise, and the queries are scaled by the head size except in
  the 62-layer (27B) model, where it is the width over the head count.
* Phi-3 and Phi-4 keep query, key and value in one matrix and the gate and up projections in
  another, in the order mlx-lm's `phi3` splits them. Their 128k-context variants (LongRoPE
  factors) are refused: llama.cpp picks the long or short factors by the context it is given,
  mlx-lm by the prompt's length, so the two would answer differently.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import mlx.core as mx

from inference.errors import ModelLoadError
from inference.importing.gguf_support import GROUP_SIZE
from inference.importing.gguf_tensors import Tensors

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
_GEMMA3_BLOCK = {
    **_IN_BLOCK,
    "post_attention_norm": "post_attention_layernorm",
    "ffn_norm": "pre_feedforward_layernorm",
    "post_ffw_norm": "post_feedforward_layernorm",
}
_PHI3_BLOCK = {
    **_IN_BLOCK,
    "attn_qkv": "self_attn.qkv_proj",
    "ffn_up": "mlp.gate_up_proj",
}
# Metadata every file must have, beyond its tensors (`{arch}` is the architecture).
REQUIRED = ("embedding_length", "block_count", "feed_forward_length", "attention.head_count")
# Gemma 3's one layer in six that attends globally (llama.cpp's default pattern).
_GEMMA3_PATTERN = 6


@dataclass(frozen=True)
class Family:
    """How one GGUF architecture becomes an mlx-lm model folder."""

    model_type: str
    rope_traditional: bool
    block_names: dict[str, str] = field(default_factory=lambda: dict(_IN_BLOCK))
    # The family's own config keys, from the metadata getter and the common config.
    extra_config: Callable[[Callable[..., Any], dict[str, Any]], dict[str, Any]] | None = None
    # Values the converter changed, put back (by mlx-lm name).
    restore: Callable[[Tensors], Tensors] | None = None


def _gemma3_config(get: Callable[..., Any], config: dict[str, Any]) -> dict[str, Any]:
    if get("final_logit_softcapping", 0.0):
        raise ModelLoadError("This Gemma 3 GGUF caps its logits, which mlx-lm's Gemma 3 does not.")
    layers = config["num_hidden_layers"]
    pattern = get("attention.sliding_window_pattern", _GEMMA3_PATTERN)
    if isinstance(pattern, list):  # one flag a layer: it must repeat every n layers
        pattern = _period(cast("list[bool]", pattern))
    heads, hidden = config["num_attention_heads"], config["hidden_size"]
    extra = {
        "rope_local_base_freq": get("rope.freq_base_swa", 10000.0),
        "sliding_window": get("attention.sliding_window", 512),
        "sliding_window_pattern": pattern,
        # llama.cpp's f_attention_scale: the 62-layer (27B) model scales by width over heads.
        "query_pre_attn_scalar": hidden // heads if layers == 62 else config["head_dim"],
    }
    return extra


def _period(is_sliding: list[bool]) -> int:
    """The n of a per-layer pattern that is global every n-th layer, the rest sliding."""
    period = next((i + 1 for i, sliding in enumerate(is_sliding) if not sliding), None)
    expected = [(i + 1) % period != 0 for i in range(len(is_sliding))] if period else None
    if period is None or expected != is_sliding:
        raise ModelLoadError("This Gemma 3 GGUF's sliding-window layers follow no fixed period.")
    return period


def _gemma3_norms(weights: Tensors) -> Tensors:
    restored: Tensors = {}
    for name, value in weights.items():
        restored[name] = value - 1.0 if name.endswith("norm.weight") else value
    return restored


def _phi3_config(get: Callable[..., Any], config: dict[str, Any]) -> dict[str, Any]:
    rotated = get("rope.dimension_count", config["head_dim"])
    return {"partial_rotary_factor": rotated / config["head_dim"]}


FAMILIES: dict[str, Family] = {
    "llama": Family("llama", rope_traditional=True),
    "qwen2": Family("qwen2", rope_traditional=False),
    "qwen3": Family("qwen3", rope_traditional=False),
    "gemma3": Family(
        "gemma3_text",
        rope_traditional=False,
        block_names=_GEMMA3_BLOCK,
        extra_config=_gemma3_config,
        restore=_gemma3_norms,
    ),
    "phi3": Family(
        "phi3", rope_traditional=False, block_names=_PHI3_BLOCK, extra_config=_phi3_config
    ),
}


def mlx_name(gguf_name: str, family: Family | None = None) -> str:
    """mlx-lm's name for a GGUF tensor (`blk.3.attn_q.weight` is
    `model.layers.3.self_attn.q_proj.weight`)."""
    names = (family or FAMILIES["llama"]).block_names
    module, _, parameter = gguf_name.rpartition(".")
    block = re.fullmatch(r"blk\.(\d+)\.(\w+)", module)
    if block and block.group(2) in names:
        return f"model.layers.{block.group(1)}.{names[block.group(2)]}.{parameter}"
    if module in _TOP_LEVEL:
        return f"{_TOP_LEVEL[module]}.{parameter}"
    raise ModelLoadError(
        f"The GGUF tensor '{gguf_name}' has no counterpart in the MLX model "
        "(this file has parts Branchwise cannot import)."
    )


def rename_tensors(tensors: Tensors, family: Family | None = None) -> Tensors:
    weights = {mlx_name(name, family): value for name, value in tensors.items()}
    if family is not None and family.restore is not None:
        weights = family.restore(weights)
    return weights


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
    family = FAMILIES[architecture]

    def get(key: str, default: Any = None) -> Any:
        return metadata.get(f"{architecture}.{key}", default)

    heads = get("attention.head_count")
    kv_heads = get("attention.head_count_kv", heads)
    if isinstance(heads, list) or isinstance(kv_heads, list):
        raise ModelLoadError("This GGUF has a different number of attention heads per layer.")
    hidden = get("embedding_length")
    head_dim = get("attention.key_length", hidden // heads)
    if get("rope.dimension_count", head_dim) != head_dim and architecture != "phi3":
        raise ModelLoadError("This GGUF applies RoPE to part of each head, which is not supported.")
    scaling = get("rope.scaling.type", "none")
    if scaling not in ("none", "linear"):
        raise ModelLoadError(f"This GGUF uses '{scaling}' RoPE scaling, which is not supported.")
    config: dict[str, Any] = {
        "model_type": family.model_type,
        "hidden_size": hidden,
        "num_hidden_layers": get("block_count"),
        "intermediate_size": get("feed_forward_length"),
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "head_dim": head_dim,
        "rms_norm_eps": get("attention.layer_norm_rms_epsilon", 1e-5),
        "rope_theta": get("rope.freq_base", 10000.0),
        "rope_traditional": family.rope_traditional,
        "max_position_embeddings": get("context_length"),
        "vocab_size": weights["model.embed_tokens.weight"].shape[0],
        "tie_word_embeddings": "lm_head.weight" not in weights,
        "bos_token_id": metadata.get("tokenizer.ggml.bos_token_id"),
        "eos_token_id": metadata.get("tokenizer.ggml.eos_token_id"),
    }
    if family.model_type == "llama":
        config["attention_bias"] = "model.layers.0.self_attn.q_proj.bias" in weights
    if scaling == "linear":
        config["rope_scaling"] = {"type": "linear", "factor": get("rope.scaling.factor")}
    if rope_factors is not None:
        config["rope_scaling"] = llama3_rope_scaling(rope_factors, config["rope_theta"], head_dim)
    if family.extra_config is not None:
        config.update(family.extra_config(get, config))
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
