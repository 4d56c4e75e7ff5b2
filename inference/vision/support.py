"""Whether a model folder's model reads images here, from its files alone (no MLX), so the
library can say so before anything loads.

A folder is a vision model when its config.json has `vision_config` (LM Studio's rule). It
reads images when Branchwise runs its family exactly (inference.vision.families) and the folder
holds its processor's settings; otherwise it loads as text only, and this says why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inference.vision.families import family_for, supported_names

PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")


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
