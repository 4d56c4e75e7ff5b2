"""Each image through the model's own processor, once: the tokens it expands to, the pixel
inputs the encoder reads, and a digest of exactly that, which names the image everywhere else
(the cache key, the feature memo, saved caches).

The digest covers what the model sees: the processor's settings, the detail limit, the expanded
token ids and every pixel array (shape, dtype and bytes). Two images of one size therefore never
share a digest, and neither do one image at two detail limits.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from inference.errors import PromptError
from inference.vision.images import ImageSource, open_rgb

if TYPE_CHECKING:
    from PIL.Image import Image

    from inference.vision.families import Family

# Prepared images kept: the pixel arrays are the processor's output, a few MB each at most; the
# encoder's output is kept separately (inference.vision.features), within the cache budget.
_MEMO_SIZE = 16


@dataclass(frozen=True, eq=False)
class PreparedImage:
    """One image as the model takes it."""

    digest: str
    name: str
    token_ids: tuple[int, ...]  # the image's run alone, markers included
    text: str  # the same as text: what stands for the image in the prompt's text
    inputs: dict[str, np.ndarray] = field(repr=False)  # pixel_values and its companions
    width: int  # the picture's size before the processor (after any detail limit)
    height: int

    @property
    def grid(self) -> tuple[int, ...] | None:
        """Qwen's (t, h, w) patch grid, None for processors that have none."""
        grid = self.inputs.get("image_grid_thw")
        return tuple(int(v) for v in grid.reshape(-1)) if grid is not None else None


class ImageProcessing:
    """A model's processor, run once per image (by the bytes' digest and the detail limit)."""

    def __init__(self, processor: Any, family: Family) -> None:
        self._processor = processor
        self._family = family
        self._fingerprint = _settings(processor)
        self._memo: OrderedDict[tuple[str, int | None], PreparedImage] = OrderedDict()
        self._capped: dict[int, Any] = {}

    def prepare(self, source: ImageSource, detail: int | None = None) -> PreparedImage:
        """The image as the model takes it; `detail` caps the longest edge in pixels (None: the
        processor's own sizing). PromptError names an image that cannot be read."""
        key = (source.sha256, detail)
        cached = self._memo.get(key)
        if cached is not None:
            self._memo.move_to_end(key)
            return cached
        picture = _limited(open_rgb(source), detail)
        processor = self._processor if detail is None else self._capped_at(detail)
        try:
            out = processor(text=[self._family.placeholder], images=[picture], return_tensors="np")
        except (ValueError, TypeError, RuntimeError) as error:
            raise PromptError(f"The image {source.name} could not be processed: {error}") from error
        ids = tuple(int(i) for i in np.asarray(out["input_ids"]).reshape(-1))
        inputs = {
            name: np.asarray(value)
            for name, value in out.items()
            if name not in ("input_ids", "attention_mask", "mm_token_type_ids")
            and value is not None
        }
        digest = hashlib.sha256(self._fingerprint)
        digest.update(json.dumps([detail, ids]).encode())
        for name in sorted(inputs):
            array = np.ascontiguousarray(inputs[name])
            digest.update(f"{name}:{array.dtype.str}:{array.shape}".encode())
            digest.update(array.tobytes())
        # Special tokens and the newlines between them decode to exactly the text the processor
        # wrote; checked, since the prompt is tokenized from this text.
        tokenizer = getattr(processor, "tokenizer", None)
        text = tokenizer.decode(list(ids), skip_special_tokens=False) if tokenizer else ""
        if (
            not text
            or tokenizer is None
            or (list(tokenizer(text, add_special_tokens=False)["input_ids"]) != list(ids))
        ):
            raise PromptError(f"The image {source.name} has no text form this tokenizer keeps.")
        prepared = PreparedImage(
            digest.hexdigest(), source.name, ids, text, inputs, picture.width, picture.height
        )
        self._memo[key] = prepared
        if len(self._memo) > _MEMO_SIZE:
            self._memo.popitem(last=False)
        return prepared

    def _capped_at(self, detail: int) -> Any:
        """The processor with its own size limit at `detail`: processors scale every picture
        to their working size (SmolVLM up to its longest edge, Qwen up to its pixel budget,
        Gemma 4 up to its token budget), so a smaller picture alone would be scaled back up."""
        if detail not in self._capped:
            capped = copy.copy(self._processor)
            images = copy.copy(capped.image_processor)
            size = getattr(images, "size", None)
            edge = _get(size, "longest_edge")
            if isinstance(edge, int):
                tile = _get(getattr(images, "max_image_size", None), "longest_edge") or 1
                # Whole tiles, at least one: the processor cuts its working size into tiles.
                limit = max(tile, -(-detail // tile) * tile)
                images.size = {**_as_dict(size), "longest_edge": min(edge, limit)}
            if isinstance(getattr(images, "max_pixels", None), int):
                images.max_pixels = max(
                    images.min_pixels or 0, min(images.max_pixels, detail * detail)
                )
            tokens = getattr(images, "max_soft_tokens", None)
            if isinstance(tokens, int):
                # Gemma 4 sizes a picture by a token budget (a token per pooled square of
                # patches), as Qwen does by pixels: the budget a square of `detail` fills.
                side = images.patch_size * images.pooling_kernel_size
                images.max_soft_tokens = max(1, min(tokens, (detail // side) ** 2))
            capped.image_processor = images
            self._capped[detail] = capped
        return self._capped[detail]


# A processor's size setting: a dict, or an object with attributes (transformers' SizeDict).
def _get(size: object, key: str) -> Any:
    if isinstance(size, dict):
        return cast("dict[str, Any]", size).get(key)
    return getattr(size, key, None)


def _as_dict(size: object) -> dict[str, Any]:
    if isinstance(size, dict):
        return dict(cast("dict[str, Any]", size))
    return {k: v for k, v in vars(size).items() if v is not None} if size is not None else {}


def _limited(picture: Image, detail: int | None) -> Image:
    """The picture with its longest edge at most `detail` pixels (aspect kept)."""
    if detail is None or max(picture.size) <= detail:
        return picture
    scale = detail / max(picture.size)
    size = (max(1, round(picture.width * scale)), max(1, round(picture.height * scale)))
    from PIL import Image

    return picture.resize(size, Image.Resampling.LANCZOS)


def _settings(processor: Any) -> bytes:
    """The processor's settings as bytes: a change of any of them changes every digest."""
    image_processor = getattr(processor, "image_processor", processor)
    settings: dict[str, Any]
    try:
        settings = image_processor.to_dict()
    except (AttributeError, TypeError, ValueError):
        settings = {}
    settings = {k: v for k, v in settings.items() if not k.startswith("_")}
    extra = {
        name: getattr(processor, name)
        for name in ("image_seq_len", "num_image_tokens", "image_token")
        if isinstance(getattr(processor, name, None), int | str)
    }
    text = json.dumps(
        [type(image_processor).__name__, settings, extra], sort_keys=True, default=str
    )
    return text.encode()
