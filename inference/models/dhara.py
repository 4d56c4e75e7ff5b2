"""Dhara (codelion/dhara-250m and its AR base) in mlx-lm's model-module shape, for AR decoding.

The family is a LLaMA-3-style decoder (grouped-query attention, RMSNorm, SwiGLU, usually tied
embeddings) with Canon layers: causal depthwise 1-D convolutions (kernel 4, no bias, a residual
connection) at up to four places in every block, named by `canon_set`:

* A on the input-norm output, before attention;
* B on q, k and v, right after their projections (one depthwise conv per stream; a depthwise
  conv over the concatenated q|k|v is the same thing, so a fused checkpoint weight is split);
* C on the post-attention-norm output, before the MLP;
* D inside the MLP: on the gated product silu(gate) * up (`canon_d_input: "product"`), or on
  gate|up before gating (`"gate_up"`, the Physics-of-LMs reference code).

QK RMSNorm (one weight of head_dim per projection) comes after RoPE, as the model card says,
and the logits are soft-capped: cap * tanh(logits / cap).

What was checked and what is assumed (no weights could be downloaded when this was written):

* The card's "Canon Parameters 638,976" for 32 layers is 4 x 4,992 channels per layer, which is
  A 768 + B 768+256+256 + C 768 + D 2,176: D convolves the gated product (intermediate size),
  not gate|up (2 x 2,176), and the convolutions have no bias. So "product" is the default;
  the converter reads D's weight shape and records the variant the checkpoint has.
* Tensor names follow the Physics-of-LMs reference (`canonA`, `self_attn.canonB`, `canonC`,
  `mlp.canonD`) or their snake-case forms (`canon_a`, ...). Convolution weights arrive in
  PyTorch's Conv1d layout (channels, 1, kernel); `sanitize` renames them to this module's
  `<position>.conv.weight` and transposes them to MLX's (channels, kernel, 1).
* The soft cap's config key is taken as Gemma-2's `final_logit_softcapping`; the converter maps
  the other spellings it knows onto it.

Cache: one `CacheList(KVCache, ArraysCache)` per layer. The ArraysCache holds each canon
position's window of its last `kernel - 1` inputs, so the whole cache state saves, loads and
forks like any other; it cannot be trimmed (a window cannot be rewound), so the engine keeps
checkpoints at message boundaries instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import mlx.core as mx
import mlx.nn as nn
from mlx_lm.models.activations import swiglu
from mlx_lm.models.base import BaseModelArgs, create_attention_mask, scaled_dot_product_attention
from mlx_lm.models.cache import ArraysCache, CacheList, KVCache
from mlx_lm.models.rope_utils import initialize_rope

CANON_POSITIONS = "ABCD"
CANON_D_INPUTS = ("product", "gate_up")


@dataclass
class ModelArgs(BaseModelArgs):
    model_type: str
    hidden_size: int
    num_hidden_layers: int
    intermediate_size: int
    num_attention_heads: int
    num_key_value_heads: int
    vocab_size: int
    head_dim: int | None = None
    rms_norm_eps: float = 1e-6
    rope_theta: float = 8_000_000.0
    rope_scaling: dict[str, Any] | None = None
    max_position_embeddings: int = 32768
    tie_word_embeddings: bool = True
    attention_bias: bool = False
    canon_set: str = CANON_POSITIONS
    canon_kernel: int = 4
    canon_bias: bool = False
    canon_residual: bool = True
    canon_activation: bool = False
    canon_d_input: str = "product"
    final_logit_softcapping: float | None = None

    def __post_init__(self) -> None:
        if self.head_dim is None:
            self.head_dim = self.hidden_size // self.num_attention_heads
        self.canon_set = self.canon_set.upper()
        unknown = set(self.canon_set) - set(CANON_POSITIONS)
        if unknown:
            raise ValueError(f"canon_set has unknown positions {sorted(unknown)}")
        if self.canon_kernel < 1:
            raise ValueError("canon_kernel must be at least 1")
        if self.canon_d_input not in CANON_D_INPUTS:
            raise ValueError(f"canon_d_input must be one of {CANON_D_INPUTS}")


def canon_channels(args: ModelArgs) -> dict[str, int]:
    """Channels of each canon convolution in one block, by cache slot name, in slot order."""
    head_dim = _head_dim(args)
    q, kv = args.num_attention_heads * head_dim, args.num_key_value_heads * head_dim
    d = args.intermediate_size * (2 if args.canon_d_input == "gate_up" else 1)
    every = {
        "a": ("A", args.hidden_size),
        "q": ("B", q),
        "k": ("B", kv),
        "v": ("B", kv),
        "c": ("C", args.hidden_size),
        "d": ("D", d),
    }
    return {name: n for name, (position, n) in every.items() if position in args.canon_set}


class Canon(nn.Module):
    """A causal depthwise convolution over time with an optional residual connection.

    With a cache, the `kernel - 1` inputs before this call come from (and the last ones go back
    to) the cache's `slot`, so feeding a sequence in pieces equals feeding it whole.
    """

    def __init__(self, channels: int, args: ModelArgs) -> None:
        super().__init__()
        self.kernel = args.canon_kernel
        self.residual = args.canon_residual
        self.activation = args.canon_activation
        self.conv = nn.Conv1d(
            channels, channels, args.canon_kernel, groups=channels, bias=args.canon_bias
        )

    def __call__(self, x: mx.array, windows: ArraysCache | None, slot: int) -> mx.array:
        keep = self.kernel - 1
        if windows is None:
            padded = mx.pad(x, [(0, 0), (keep, 0), (0, 0)])
        else:
            window = windows[slot]
            if window is None:
                window = mx.zeros((x.shape[0], keep, x.shape[2]), dtype=x.dtype)
            padded = mx.concatenate([window, x], axis=1)
            # A new array each step: a forked cache never writes into its parent's window.
            windows[slot] = padded[:, padded.shape[1] - keep :, :]
        y = self.conv(padded)
        if self.activation:
            y = nn.silu(y)
        return x + y if self.residual else y


class Attention(nn.Module):
    def __init__(self, args: ModelArgs, canons: dict[str, int]) -> None:
        super().__init__()
        dim, head_dim = args.hidden_size, _head_dim(args)
        self.n_heads, self.n_kv_heads, self.head_dim = (
            args.num_attention_heads,
            args.num_key_value_heads,
            head_dim,
        )
        self.scale = head_dim**-0.5
        bias = args.attention_bias
        self.q_proj = nn.Linear(dim, self.n_heads * head_dim, bias=bias)
        self.k_proj = nn.Linear(dim, self.n_kv_heads * head_dim, bias=bias)
        self.v_proj = nn.Linear(dim, self.n_kv_heads * head_dim, bias=bias)
        self.o_proj = nn.Linear(self.n_heads * head_dim, dim, bias=False)
        self.q_norm = nn.RMSNorm(head_dim, eps=args.rms_norm_eps)
        self.k_norm = nn.RMSNorm(head_dim, eps=args.rms_norm_eps)
        self.rope = initialize_rope(
            head_dim, args.rope_theta, False, args.rope_scaling, args.max_position_embeddings
        )
        self.slots = {name: i for i, name in enumerate(canons) if name in "qkv"}
        if self.slots:
            self.canon_q = Canon(canons["q"], args)
            self.canon_k = Canon(canons["k"], args)
            self.canon_v = Canon(canons["v"], args)

    def __call__(
        self,
        x: mx.array,
        mask: Any,
        kv: KVCache | None,
        windows: ArraysCache | None,
    ) -> mx.array:
        B, L, _ = x.shape
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        if self.slots:
            q = self.canon_q(q, windows, self.slots["q"])
            k = self.canon_k(k, windows, self.slots["k"])
            v = self.canon_v(v, windows, self.slots["v"])
        q = _split_heads(q, self.n_heads)
        k = _split_heads(k, self.n_kv_heads)
        v = _split_heads(v, self.n_kv_heads)
        offset = kv.offset if kv is not None else 0
        q = self.q_norm(self.rope(q, offset=offset))
        k = self.k_norm(self.rope(k, offset=offset))
        if kv is not None:
            k, v = kv.update_and_fetch(k, v)
        out = scaled_dot_product_attention(q, k, v, cache=kv, scale=self.scale, mask=mask)
        return self.o_proj(mx.reshape(mx.transpose(out, (0, 2, 1, 3)), (B, L, -1)))


class MLP(nn.Module):
    def __init__(self, args: ModelArgs, canons: dict[str, int]) -> None:
        super().__init__()
        dim, hidden = args.hidden_size, args.intermediate_size
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)
        self.gate_up = args.canon_d_input == "gate_up"
        self.slot = list(canons).index("d") if "d" in canons else None
        if self.slot is not None:
            self.canon_d = Canon(canons["d"], args)

    def __call__(self, x: mx.array, windows: ArraysCache | None) -> mx.array:
        gate, up = self.gate_proj(x), self.up_proj(x)
        if self.slot is not None and self.gate_up:
            mixed = self.canon_d(mx.concatenate([gate, up], axis=-1), windows, self.slot)
            gate, up = mx.split(mixed, 2, axis=-1)
        h = swiglu(gate, up)
        if self.slot is not None and not self.gate_up:
            h = self.canon_d(h, windows, self.slot)
        return self.down_proj(h)


class DecoderLayer(nn.Module):
    def __init__(self, args: ModelArgs) -> None:
        super().__init__()
        canons = canon_channels(args)
        self.slots = {name: i for i, name in enumerate(canons) if name in "ac"}
        self.self_attn = Attention(args, canons)
        self.mlp = MLP(args, canons)
        self.input_layernorm = nn.RMSNorm(args.hidden_size, eps=args.rms_norm_eps)
        self.post_attention_layernorm = nn.RMSNorm(args.hidden_size, eps=args.rms_norm_eps)
        if "a" in self.slots:
            self.canon_a = Canon(canons["a"], args)
        if "c" in self.slots:
            self.canon_c = Canon(canons["c"], args)

    def __call__(self, x: mx.array, mask: Any, cache: CacheList | None) -> mx.array:
        kv, windows = (cache[0], cache[1]) if cache is not None else (None, None)
        h = self.input_layernorm(x)
        if "a" in self.slots:
            h = self.canon_a(h, windows, self.slots["a"])
        x = x + self.self_attn(h, mask, kv, windows)
        h = self.post_attention_layernorm(x)
        if "c" in self.slots:
            h = self.canon_c(h, windows, self.slots["c"])
        return x + self.mlp(h, windows)


class DharaModel(nn.Module):
    def __init__(self, args: ModelArgs) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(args.vocab_size, args.hidden_size)
        self.layers = [DecoderLayer(args) for _ in range(args.num_hidden_layers)]
        self.norm = nn.RMSNorm(args.hidden_size, eps=args.rms_norm_eps)

    def __call__(self, inputs: mx.array, cache: list[CacheList] | None = None) -> mx.array:
        h = self.embed_tokens(inputs)
        caches: Sequence[CacheList | None] = [None] * len(self.layers) if cache is None else cache
        mask = create_attention_mask(h, caches[0][0] if caches[0] is not None else None)
        for layer, layer_cache in zip(self.layers, caches, strict=True):
            h = layer(h, mask, layer_cache)
        return self.norm(h)


class Model(nn.Module):
    def __init__(self, args: ModelArgs) -> None:
        super().__init__()
        self.args = args
        self.model_type = args.model_type
        self.model = DharaModel(args)
        if not args.tie_word_embeddings:
            self.lm_head = nn.Linear(args.hidden_size, args.vocab_size, bias=False)

    def __call__(self, inputs: mx.array, cache: list[CacheList] | None = None) -> mx.array:
        h = self.model(inputs, cache)
        if self.args.tie_word_embeddings:
            logits = self.model.embed_tokens.as_linear(h)
        else:
            logits = self.lm_head(h)
        cap = self.args.final_logit_softcapping
        if cap:
            logits = mx.tanh(logits / cap) * cap
        return logits

    @property
    def layers(self) -> list[DecoderLayer]:
        return self.model.layers

    def make_cache(self) -> list[CacheList]:
        windows = len(canon_channels(self.args))
        return [CacheList(KVCache(), ArraysCache(windows)) for _ in self.layers]

    def sanitize(self, weights: dict[str, mx.array]) -> dict[str, mx.array]:
        """Bring a checkpoint in the published layout (or this module's own) to this module's.

        Canon weights are renamed to `<position>.conv.<weight|bias>` and moved from PyTorch's
        Conv1d layout (channels, 1, kernel) to MLX's (channels, kernel, 1); a fused q|k|v
        canon B is split; a tied model's lm_head and RoPE's cached frequencies are dropped.
        Weights already in this module's layout pass through unchanged.
        """
        out: dict[str, mx.array] = {}
        for name, value in weights.items():
            if "rotary_emb.inv_freq" in name or (
                self.args.tie_word_embeddings and name == "lm_head.weight"
            ):
                continue
            match = _CANON_NAME.match(name)
            if match is None:
                out[name] = value
                continue
            prefix, position, kind = match.group(1), match.group(2).lower(), match.group(3)
            if kind == "weight" and value.shape[1] == 1 and value.shape[2] != 1:
                value = mx.transpose(value, (0, 2, 1))
            if position == "b":
                sizes = canon_channels(self.args)
                q, k = sizes["q"], sizes["k"]
                for stream, part in zip("qkv", mx.split(value, [q, q + k]), strict=True):
                    out[f"{prefix}canon_{stream}.conv.{kind}"] = part
            else:
                out[f"{prefix}canon_{position}.conv.{kind}"] = value
        return out


def _head_dim(args: ModelArgs) -> int:
    assert args.head_dim is not None, "ModelArgs.__post_init__ fills it in"
    return args.head_dim


def _split_heads(x: mx.array, heads: int) -> mx.array:
    """(batch, length, heads * head_dim) -> (batch, heads, length, head_dim).

    The function forms of reshape and transpose: mlx's stub leaves the methods' axes untyped."""
    batch, length, _ = x.shape
    return mx.transpose(mx.reshape(x, (batch, length, heads, -1)), (0, 2, 1, 3))


# A canon weight or bias in the published layout: `canonA.weight`, `canon_a.weight`,
# `self_attn.canonB.weight`, `self_attn.canon_q.weight`, ... (not this module's `.conv.` names).
_CANON_NAME = re.compile(r"^(.*?)canon_?([ABCDabcdqkv])\.(weight|bias)$")
