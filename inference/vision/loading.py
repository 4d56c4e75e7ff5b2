"""A vision model folder loaded through mlx-vlm's loaders, from the folder only.

A folder is a vision model when its config.json has `vision_config` (LM Studio's rule). It runs
with images when Branchwise has an exact path for its family (inference.vision.families) and the
folder holds its processor's files; otherwise the caller loads it as text only and shows the
reason. Paths are always local `Path`s and the processor is asked for local files only, so
mlx-vlm never reaches for the hub, and nothing in the folder is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inference.vision.families import Family, family_for, supported_names
from inference.vision.language_view import LanguageView
from inference.vision.processing import ImageProcessing

PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")


@dataclass(frozen=True, eq=False)
class VisionSupport:
    """What a loaded vision model needs besides its language model."""

    family: Family
    model: Any  # the mlx-vlm model (vision tower, projector and language model)
    processing: ImageProcessing
    image_token_id: int


def is_vision_config(config: dict[str, Any]) -> bool:
    return isinstance(config.get("vision_config"), dict)


def text_only_reason(folder: Path, config: dict[str, Any]) -> str | None:
    """Why the vision model in `folder` would load without its vision (None: it can see)."""
    model_type = str(config.get("model_type", ""))
    if family_for(model_type) is None:
        return (
            f"Images are not supported for '{model_type}' models yet (Branchwise reads images "
            f"exactly with {supported_names()})."
        )
    if not any((folder / name).is_file() for name in PROCESSOR_FILES):
        return "The model folder has no image processor settings (preprocessor_config.json)."
    return None


def load_vision(folder: Path, config: dict[str, Any], tokenizer: Any) -> tuple[
    LanguageView, VisionSupport
]:
    """The model's language view and its vision parts. Raises what mlx-vlm and transformers
    raise for a folder they cannot read; the caller turns that into a ModelLoadError."""
    from mlx_vlm.utils import load_model, load_processor

    family = family_for(str(config.get("model_type")))
    assert family is not None, "text_only_reason is asked first"
    model = load_model(folder)
    processor = load_processor(folder, add_detokenizer=False, local_files_only=True)
    # The placeholder must be one token of its own, or text around it could merge with it.
    placeholder_id = tokenizer.convert_tokens_to_ids(family.placeholder)
    if not isinstance(placeholder_id, int) or placeholder_id < 0:
        raise ValueError(f"the tokenizer has no {family.placeholder} token")
    support = VisionSupport(
        family=family,
        model=model,
        processing=ImageProcessing(processor, family),
        image_token_id=family.image_token_id(config),
    )
    return LanguageView(model, family), support
