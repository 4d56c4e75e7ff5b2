"""From token states to one unit vector per text, on MLX: pooling, the dense steps, the norm.

A batch is padded on the right: row `i` holds `lengths[i]` tokens, then padding. Pooling reads
only those tokens (the first, their mean, or the one at `lengths[i] - 1`), so a text's vector
does not depend on what it was batched with. Pooling and what follows run in float32 whatever
the model's dtype.
"""

from __future__ import annotations

import mlx.core as mx
import mlx.nn as nn
import numpy as np
from numpy.typing import NDArray

from inference.embedding.folder import DenseStep, Pooling


def pool(states: mx.array, lengths: mx.array, mode: Pooling) -> mx.array:
    """(batch, tokens, hidden) states to (batch, hidden) float32, reading each row's first
    `lengths[i]` tokens only (a row of no tokens pools to zeros)."""
    states = states.astype(mx.float32)
    if mode is Pooling.FIRST:
        return states[:, 0, :] * (lengths > 0)[:, None]
    if mode is Pooling.LAST:
        last = mx.maximum(lengths - 1, 0)
        picked = mx.take_along_axis(states, last[:, None, None], axis=1)[:, 0, :]
        return picked * (lengths > 0)[:, None]
    inside = padding_mask(lengths, states.shape[1])[:, :, None]
    total = mx.where(inside, states, 0.0).sum(axis=1)
    return total / mx.maximum(lengths, 1)[:, None].astype(mx.float32)


def padding_mask(lengths: mx.array, width: int) -> mx.array:
    """(batch, width) booleans: True where a row holds a token, False on its padding."""
    return mx.arange(width)[None, :] < lengths[:, None]


class Dense(nn.Module):
    """A sentence-transformers `Dense` step: a linear layer and its activation."""

    def __init__(self, step: DenseStep) -> None:
        super().__init__()
        self.linear = nn.Linear(step.in_features, step.out_features, bias=step.bias)
        self.tanh = step.activation == "tanh"

    def __call__(self, x: mx.array) -> mx.array:
        y = self.linear(x)
        return mx.tanh(y) if self.tanh else y


def unit_rows(vectors: mx.array) -> NDArray[np.float32]:
    """The rows scaled to length 1 (a zero row stays zero), as float32 numpy."""
    norms = mx.linalg.norm(vectors, axis=-1, keepdims=True)
    unit = mx.where(norms > 0, vectors / mx.maximum(norms, 1e-12), 0.0)
    return np.array(unit.astype(mx.float32), dtype=np.float32)
