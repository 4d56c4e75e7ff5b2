"""A vision model folder loaded through mlx-vlm's loaders, from the folder only.

Which folders read images is `inference.vision.support`'s question, asked first. Paths are
always local `Path`s and the processor is asked for local files only, so mlx-vlm never reaches
for the hub, and nothing in the folder is written.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inference.vision.families import Family, family_for
from inference.vision.image_attention import overlay_images_after_prefix
from inference.vision.language_view import LanguageView
from inference.vision.processing import ImageProcessing


@dataclass(frozen=True, eq=False)
class VisionSupport:
    """What a loaded vision model needs besides its language model."""

    family: Family
    model: Any  # the mlx-vlm model (vision tower, projector and language model)
    processing: ImageProcessing
    image_token_id: int
    # Image tokens attend both ways: each image's tokens are prefilled in one chunk and no
    # cache cut falls inside one (Family.atomic_images).
    atomic_images: bool = False


def load_vision(
    folder: Path, config: dict[str, Any], tokenizer: Any
) -> tuple[LanguageView, VisionSupport]:
    """The model's language view and its vision parts. Raises what mlx-vlm and transformers
    raise for a folder they cannot read; the caller turns that into a ModelLoadError."""
    from mlx_vlm.utils import load_model, load_processor

    family = family_for(str(config.get("model_type")))
    assert family is not None, "inference.vision.support.text_only_reason is asked first"
    model = load_model(folder)
    with warnings.catch_warnings():
        # Gemma 4's processor builds its audio feature extractor too, whose default mel
        # filters warn; Branchwise never hands it audio.
        warnings.filterwarnings("ignore", "At least one mel filter has all zero values")
        processor = load_processor(folder, add_detokenizer=False, local_files_only=True)
    # The placeholder must be one token of its own, or text around it could merge with it.
    placeholder_id = tokenizer.convert_tokens_to_ids(family.placeholder)
    if not isinstance(placeholder_id, int) or placeholder_id < 0:
        raise ValueError(f"the tokenizer has no {family.placeholder} token")
    atomic = family.atomic_images(config)
    if atomic:
        overlay_images_after_prefix(model.language_model.model)
    support = VisionSupport(
        family=family,
        model=model,
        processing=ImageProcessing(processor, family),
        image_token_id=family.image_token_id(config),
        atomic_images=atomic,
    )
    return LanguageView(model, family), support
