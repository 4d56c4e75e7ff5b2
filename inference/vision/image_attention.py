"""Image tokens that attend both ways (Gemma 4 with `use_bidirectional_attention: "vision"`)
in prefill chunks that come after a cached prefix.

mlx-vlm's Gemma 4 lets the tokens of one image see each other both ways by laying an overlay
on its causal masks, but only on a square mask: a prompt run whole from an empty cache, as its
own generation runs a prompt with images (it turns chunked prefill off for them). Branchwise
prefills after a cached prefix, where each mask also has a column for every cached token, and
mlx-vlm would leave such a chunk causal. Here the same overlay goes on the chunk's own columns,
the last ones of every mask (sliding-window caches return the window's keys in order, the
chunk's last). An image never spans two chunks (inference.engine.runner keeps it whole), so
every token sees exactly what it sees in mlx-vlm's single pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mlx.core as mx
import mlx.nn as nn

MaskMaker = Callable[..., list[Any]]


def overlay_images_after_prefix(text_model: nn.Module) -> None:
    """Make `text_model` (mlx-vlm's `Gemma4TextModel`) lay its image overlay on masks with a
    cached prefix too. Its masks are built by one method, `_make_masks`, which this wraps on
    the instance; a square mask gets the same overlay twice, which changes nothing."""
    make_masks: MaskMaker = text_model._make_masks
    same_image = text_model._block_sequence_ids_for_mask

    def with_overlay(
        h: mx.array, cache: Any, mm_token_type_ids: mx.array | None = None
    ) -> list[Any]:
        masks = make_masks(h, cache, mm_token_type_ids)
        if mm_token_type_ids is None or h.shape[1] < 2:
            return masks
        blocks = same_image(mm_token_type_ids)
        both_ways = (blocks[:, :, None] != -1) & (blocks[:, :, None] == blocks[:, None, :])
        return [_on_last_columns(m, both_ways[:, None]) for m in masks]

    text_model._make_masks = with_overlay


def _on_last_columns(mask: Any, both_ways: mx.array) -> Any:
    """`mask` (boolean, queries × keys) with `both_ways` (batch, 1, queries, queries) ORed onto
    its last columns; masks that are not arrays (none, "causal") hold no image here: mlx-vlm
    makes arrays of every mask of a chunk with image tokens."""
    if not isinstance(mask, mx.array):
        return mask
    prefix = mask.shape[-1] - both_ways.shape[-1]
    if prefix:
        cached = mx.zeros((*both_ways.shape[:-1], prefix), dtype=mx.bool_)
        both_ways = mx.concatenate([cached, both_ways], axis=-1)
    return mask | both_ways
