"""A vision model's language model as mlx-lm calls a model: `view(tokens, cache=…,
input_embeddings=…)` gives logits, so mlx-lm's generation, its cache classes and Branchwise's
prefill run it unchanged.

Positions are passed explicitly on every call for families with M-RoPE. mlx-vlm's Qwen models
otherwise keep `_rope_deltas` and `_position_ids` on the model between calls, which a request on
another branch would then inherit; here each request sets its own (`use_positions`), and a
request without images uses plain positions.
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx
import mlx.nn as nn

from inference.vision.families import Family


class LanguageView(nn.Module):
    """The language path of `vlm` (its parameters are the whole model's)."""

    def __init__(self, vlm: nn.Module, family: Family) -> None:
        super().__init__()
        self.vlm = vlm
        self._family = family
        # This request's prompt positions (3, 1, N) and the offset of text after them, or None.
        self._positions: mx.array | None = None
        self._delta = 0

    @property
    def layers(self) -> list[nn.Module]:
        return self.vlm.language_model.layers

    def make_cache(self) -> list[Any]:
        """The language model's caches, with mlx-lm's own classes where mlx-vlm has copies of
        them: the branch cache cuts mlx-lm's `KVCache` into per-token segments, and
        checkpoints a `RotatingKVCache` by its `state` (mlx-vlm's keeps its offsets apart, in
        `meta_state`). Recurrent state stays mlx-vlm's: its layers call methods only that copy
        has, and its `state` is the whole of it."""
        from mlx_lm.models.cache import KVCache, RotatingKVCache

        own = getattr(self.vlm.language_model, "make_cache", None)
        if own is None:
            return [KVCache() for _ in self.layers]
        made: list[Any] = []
        for cache in own():
            kind = type(cache).__name__
            if kind == "KVCache":
                made.append(KVCache())
            elif kind == "RotatingKVCache":
                made.append(RotatingKVCache(max_size=cache.max_size, keep=cache.keep))
            else:
                made.append(cache)
        return made

    def use_positions(self, positions: mx.array | None, delta: int) -> None:
        """The positions of the request about to run (None and 0: plain positions)."""
        self._positions, self._delta = positions, delta

    def __call__(
        self,
        inputs: mx.array,
        cache: list[Any] | None = None,
        input_embeddings: mx.array | None = None,
        **extra: Any,
    ) -> mx.array:
        """Logits; `extra` is what a chunk with images adds (inference.engine.image_inputs)."""
        if self._family.mrope:
            extra["position_ids"] = self._position_ids(inputs.shape[1], cache)
        out = self.vlm.language_model(inputs, inputs_embeds=input_embeddings, cache=cache, **extra)
        return out.logits

    def _position_ids(self, length: int, cache: list[Any] | None) -> mx.array:
        # Recurrent layers keep no count of tokens; the first attention layer does.
        offset = next((c.offset for c in cache or () if hasattr(c, "offset")), 0)
        if (
            isinstance(offset, int)
            and self._positions is not None
            and (offset + length <= self._positions.shape[-1])
        ):
            return self._positions[..., offset : offset + length]
        # Past the prompt (decoding) every axis advances together, from the offset that the
        # prompt's images left; `offset` is one per sequence in a batch.
        steps = mx.arange(length)[None, :]
        if isinstance(offset, mx.array) and offset.ndim > 0:
            start = (offset[:, None] + self._delta).astype(mx.int32)
        else:
            start = mx.array([[int(offset) + self._delta]], dtype=mx.int32)
        positions = start + steps
        return mx.broadcast_to(positions[None], (3, *positions.shape))
