"""The vision encoder's output per image, kept by the image's digest so one image in five
branches, or in every turn after the one that sent it, is encoded once.

Entries are least recently used first out, within a byte budget that is part of the engine's
cache budget. Worker thread only: it holds MLX arrays.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mlx.core as mx
import numpy as np

if TYPE_CHECKING:
    from inference.vision.processing import PreparedImage


@dataclass(frozen=True, eq=False)
class ImageRows:
    """One image's embeddings at its image-token positions, in order, (n, hidden); and for
    deepstack families (Qwen3-VL) the features added into the first decoder layers at those
    positions, (layers, n, hidden)."""

    embeds: mx.array
    deepstack: mx.array | None = None

    @property
    def nbytes(self) -> int:
        return self.embeds.nbytes + (self.deepstack.nbytes if self.deepstack is not None else 0)


class FeatureCache:
    """Image-token embeddings by image digest: exact copies of what the model's merge places."""

    def __init__(self, model: Any, image_token_id: int, budget_bytes: int) -> None:
        self._model = model
        self._image_token = image_token_id
        self._entries: OrderedDict[str, ImageRows] = OrderedDict()
        self._budget = budget_bytes
        # Encoder runs, for the figures and the tests that count them.
        self.encoded = 0

    @property
    def budget_bytes(self) -> int:
        return self._budget

    @budget_bytes.setter
    def budget_bytes(self, value: int) -> None:
        """A new budget; entries beyond it go at once."""
        self._budget = value
        self._trim(keep=None)

    def nbytes(self) -> int:
        return sum(rows.nbytes for rows in self._entries.values())

    def clear(self) -> None:
        self._entries.clear()

    def rows(self, image: PreparedImage) -> ImageRows:
        """The image's rows, encoded on first use."""
        rows = self._entries.get(image.digest)
        if rows is None:
            rows = self._encode(image)
            # One larger than the whole budget is used, not kept, rather than wiping the rest.
            if rows.nbytes <= self._budget:
                self._entries[image.digest] = rows
                self._trim(keep=image.digest)
        else:
            self._entries.move_to_end(image.digest)
        return rows

    def _encode(self, image: PreparedImage) -> ImageRows:
        ids = mx.array(image.token_ids)[None]
        inputs = {name: mx.array(value) for name, value in image.inputs.items()}
        # An all-ones attention mask: nothing is padding (Gemma's merge requires one).
        embedded = self._model.get_input_embeddings(ids, mask=mx.ones_like(ids), **inputs)
        positions = np.flatnonzero(np.array(image.token_ids) == self._image_token)
        deepstack = embedded.deepstack_visual_embeds
        rows = ImageRows(
            embedded.inputs_embeds[0][mx.array(positions)],
            mx.stack(list(deepstack)) if deepstack is not None else None,
        )
        mx.eval(rows.embeds, *([] if rows.deepstack is None else [rows.deepstack]))  # pyright: ignore[reportUnknownMemberType]  # mlx stub: eval(*args) untyped
        self.encoded += 1
        return rows

    def _trim(self, keep: str | None) -> None:
        """Evict the least recently used until within budget, except `keep` (just stored, and
        never larger than the budget)."""
        for digest in list(self._entries):
            if self.nbytes() <= self._budget:
                return
            if digest != keep:
                del self._entries[digest]
