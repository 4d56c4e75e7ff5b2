"""A request's images as prefill feeds them: the embeddings of each chunk (text embedded as the
model embeds it, each image's rows from the feature memo) and, for M-RoPE families, the
prompt's positions, computed for this request alone.

Images that the cached prefix already covers are never encoded: their rows are asked for only
when a chunk holds their tokens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import mlx.core as mx
import numpy as np

if TYPE_CHECKING:
    from inference.engine.request import Request
    from inference.loading.load import LoadedModel
    from inference.vision.features import FeatureCache, ImageRows


class ImageInputs:
    """Chunk embeddings and positions for one model's requests."""

    def __init__(self, loaded: LoadedModel, features: FeatureCache | None) -> None:
        self._loaded = loaded
        self._features = features
        # The request's own rows, so an image spread over several chunks is looked up (or, past
        # a tiny budget, encoded) once per request.
        self._rows: dict[str, ImageRows] = {}

    def begin(self, request: Request) -> None:
        """Set the positions `request` runs at on the model (plain ones without images), so
        nothing carries over from the request before it."""
        vision = self._loaded.vision
        self._rows = {}
        if vision is None:
            return
        view = self._loaded.model
        prompt = request.vision
        if not vision.family.mrope or prompt is None:
            view.use_positions(None, 0)
            return
        grids = [span.image.grid for span in prompt.spans]
        positions, deltas = vision.model.language_model.get_rope_index(
            mx.array(prompt.ids)[None], image_grid_thw=mx.array(grids)
        )
        view.use_positions(positions, int(deltas.reshape(-1)[0].item()))

    def chunk(self, request: Request, start: int, stop: int) -> dict[str, mx.array]:
        """What the model takes besides the ids for prompt positions [start, stop): nothing
        when no image lies there (the model embeds the ids itself, to the same values), else
        `input_embeddings` with each image's rows in place and, for deepstack families, the
        image positions and their per-layer features; for Gemma 4 also its per-layer inputs,
        which its own embedding step computes with image tokens as padding (from the ids
        alone the model would read the image token's own), and where the image tokens are,
        for images whose tokens attend both ways."""
        prompt, vision = request.vision, self._loaded.vision
        if prompt is None or vision is None or self._features is None:
            return {}
        spans = [s for s in prompt.spans if s.start < stop and s.end > start]
        if not spans:
            return {}
        ids = prompt.ids
        embedded = vision.model.get_input_embeddings(mx.array(ids[start:stop])[None])
        chunk = embedded.inputs_embeds
        visual = np.zeros(stop - start, dtype=bool)
        deepstack: list[mx.array] = []
        for span in spans:
            digest = span.image.digest
            if digest not in self._rows:
                self._rows[digest] = self._features.rows(span.image)
            rows = self._rows[digest]
            where = np.array(span.positions)
            inside = (where >= start) & (where < stop)
            if not inside.any():
                continue
            first, count = int(np.argmax(inside)), int(inside.sum())
            local = where[inside] - start
            chunk[0, mx.array(local)] = rows.embeds[first : first + count].astype(chunk.dtype)
            visual[local] = True
            if rows.deepstack is not None:
                deepstack.append(rows.deepstack[:, first : first + count])
        extra: dict[str, mx.array] = {"input_embeddings": chunk}
        if embedded.per_layer_inputs is not None:
            extra["per_layer_inputs"] = embedded.per_layer_inputs
        if vision.atomic_images:
            # mlx-vlm's token types: 1 marks an image token (inference.vision.image_attention).
            extra["mm_token_type_ids"] = mx.array(visual.astype(np.int32))[None]
        if deepstack:
            extra["visual_pos_masks"] = mx.array(visual)[None]
            # Spans come in prompt order, so their rows concatenate in position order.
            extra["deepstack_visual_embeds"] = mx.concatenate(deepstack, axis=1)
        return extra
