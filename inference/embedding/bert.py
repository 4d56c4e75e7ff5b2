"""A BERT encoder on MLX, for bge-style embedding models (mlx-lm has decoders only).

The architecture of Devlin et al. (2019) as Hugging Face's `BertModel` lays out its weights:
word, position and token-type embeddings summed and normalised, then layers of attention that
runs both ways over the text's own tokens (padding is masked out) and a GELU feed-forward, each
added back and normalised (post-norm). Only what an embedding reads is built: the pooler head
(`pooler.*`) is not, and its weights are left out on loading. Token types are all 0, as for one
text. Written for Branchwise (MIT); checked against a numpy reference in
tests/inference/embedding/test_embed_bert.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mlx.core as mx
import mlx.nn as nn

from inference.errors import ModelLoadError

# Hugging Face's names for the parts, and the shorter ones the modules below use.
_RENAMES = (
    (".attention.self.", ".attention."),
    (".attention.output.dense.", ".out."),
    (".attention.output.LayerNorm.", ".attention_norm."),
    (".intermediate.dense.", ".up."),
    (".output.dense.", ".down."),
    (".output.LayerNorm.", ".output_norm."),
    ("encoder.layer.", "layers."),
    ("embeddings.LayerNorm.", "embeddings.norm."),
)


@dataclass(frozen=True)
class BertArgs:
    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> BertArgs:
        if config.get("hidden_act", "gelu") != "gelu":
            raise ModelLoadError(f"A BERT with {config.get('hidden_act')} is not supported.")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise ModelLoadError("A BERT with relative positions is not supported.")
        names = cls.__dataclass_fields__
        try:
            args = cls(**{k: v for k, v in config.items() if k in names})
        except TypeError as error:
            raise ModelLoadError(f"The BERT config is incomplete: {error}") from error
        if args.hidden_size % args.num_attention_heads:
            raise ModelLoadError("The BERT config's heads do not divide its hidden size.")
        return args


class Embeddings(nn.Module):
    def __init__(self, args: BertArgs) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(args.vocab_size, args.hidden_size)
        self.position_embeddings = nn.Embedding(args.max_position_embeddings, args.hidden_size)
        self.token_type_embeddings = nn.Embedding(args.type_vocab_size, args.hidden_size)
        self.norm = nn.LayerNorm(args.hidden_size, eps=args.layer_norm_eps)

    def __call__(self, ids: mx.array) -> mx.array:
        positions = mx.arange(ids.shape[1])[None, :]
        summed = self.word_embeddings(ids) + self.position_embeddings(positions)
        return self.norm(summed + self.token_type_embeddings.weight[0])


class Attention(nn.Module):
    heads: int

    def __init__(self, args: BertArgs) -> None:
        super().__init__()
        self.heads = args.num_attention_heads
        self.query = nn.Linear(args.hidden_size, args.hidden_size)
        self.key = nn.Linear(args.hidden_size, args.hidden_size)
        self.value = nn.Linear(args.hidden_size, args.hidden_size)

    def __call__(self, x: mx.array, mask: mx.array) -> mx.array:
        batch, length, width = x.shape

        def heads(y: mx.array) -> mx.array:
            return mx.transpose(mx.reshape(y, (batch, length, self.heads, -1)), (0, 2, 1, 3))

        q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
        scale = (width // self.heads) ** -0.5
        out = mx.fast.scaled_dot_product_attention(q, k, v, scale=scale, mask=mask)
        return mx.reshape(mx.transpose(out, (0, 2, 1, 3)), (batch, length, width))


class Layer(nn.Module):
    def __init__(self, args: BertArgs) -> None:
        super().__init__()
        self.attention = Attention(args)
        self.out = nn.Linear(args.hidden_size, args.hidden_size)
        self.attention_norm = nn.LayerNorm(args.hidden_size, eps=args.layer_norm_eps)
        self.up = nn.Linear(args.hidden_size, args.intermediate_size)
        self.down = nn.Linear(args.intermediate_size, args.hidden_size)
        self.output_norm = nn.LayerNorm(args.hidden_size, eps=args.layer_norm_eps)

    def __call__(self, x: mx.array, mask: mx.array) -> mx.array:
        h = self.attention_norm(x + self.out(self.attention(x, mask)))
        return self.output_norm(h + self.down(nn.gelu(self.up(h))))


class Bert(nn.Module):
    """Token states of a right-padded batch: row `i`'s first `lengths[i]` tokens see each other
    and never the padding."""

    def __init__(self, args: BertArgs) -> None:
        super().__init__()
        self.args = args
        self.embeddings = Embeddings(args)
        self.layers = [Layer(args) for _ in range(args.num_hidden_layers)]

    def __call__(self, ids: mx.array, lengths: mx.array) -> mx.array:
        keys = mx.arange(ids.shape[1])[None, :] < lengths[:, None]
        # A padding row may see itself, so no softmax runs over nothing; real rows never see it.
        mask = keys[:, None, None, :] | mx.eye(ids.shape[1], dtype=mx.bool_)[None, None]
        h = self.embeddings(ids)
        for layer in self.layers:
            h = layer(h, mask)
        return h

    @staticmethod
    def sanitize(weights: dict[str, mx.array]) -> dict[str, mx.array]:
        """Hugging Face's names (with or without the `bert.` of a task model) to these modules'
        names; the pooler head and position ids are dropped."""
        renamed: dict[str, mx.array] = {}
        for name, value in weights.items():
            name = name.removeprefix("bert.")
            if name.startswith("pooler.") or name.endswith("position_ids"):
                continue
            for old, new in _RENAMES:
                name = name.replace(old, new)
            renamed[name] = value
        return renamed
