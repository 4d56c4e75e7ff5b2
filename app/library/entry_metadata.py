"""An entry's `branchwise.json`: what the model files do not say (display name, origin, the
original of a linked folder, whether mlx-lm supports it)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from app.library.model_check import LibraryError, read_json

METADATA_FILE = "branchwise.json"
# A model's own defaults for new chats (`app.library.entries.ModelDefaults`).
DEFAULTS_KEY = "defaults"


def read_metadata(folder: Path) -> dict[str, Any]:
    """The entry's metadata; empty when the file is missing or damaged (nothing in it is
    needed to load the model)."""
    try:
        return read_json(folder / METADATA_FILE) or {}
    except LibraryError:
        return {}


def write_metadata(folder: Path, **values: Any) -> None:
    """Update the entry's branchwise.json; written whole and swapped in, never half-written."""
    data = {**read_metadata(folder), **values}
    temporary = folder / f".{METADATA_FILE}.{uuid.uuid4().hex}"
    temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    temporary.replace(folder / METADATA_FILE)
