"""A found model added to the library, at most once: an MLX folder (a Hugging Face snapshot
too) linked where it lies, its files never copied or changed; a GGUF imported into a new MLX
folder, with Ollama's system prompt, stop words and parameters kept as the model's defaults.

Whether a model is in the library already is told by its origin (`app.library.origins`): a
second add names the entry that has it and adds nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.discovery.found import Format, FoundModel, OllamaLayers
from app.library.entry_metadata import DEFAULTS_KEY
from app.library.install import import_folder, import_gguf_file
from app.library.model_check import LibraryError
from app.library.origins import ORIGIN_KEY, library_origins

Progress = Callable[[int, int], None]

# Ollama's parameter names -> Branchwise's (the rest, such as num_ctx or mirostat, have no
# counterpart and are left out).
_OLLAMA_PARAMS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "min_p": "min_p",
    "repeat_penalty": "repetition_penalty",
    "seed": "seed",
    "num_predict": "max_tokens",
}


class AlreadyInLibrary(LibraryError):
    """The model was added before; `entry_id` names its entry."""

    def __init__(self, name: str, entry_id: str) -> None:
        super().__init__(f"{name} is in the library already (as '{entry_id}'); nothing was added.")
        self.entry_id = entry_id


def add_found(
    found: FoundModel,
    models_dir: Path,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """Add `found` to the library and return its entry's folder. Raises AlreadyInLibrary, or
    LibraryError (inference's ModelLoadError for a GGUF) saying why it cannot be added; nothing
    is half-added. A GGUF's import runs MLX: call this on the inference worker (or where no
    worker runs, as the command line does)."""
    entry = library_origins(models_dir).get(found.origin) if found.origin else None
    if entry is not None:
        raise AlreadyInLibrary(found.name, entry)
    if not found.runnable:
        raise LibraryError(f"{found.name} cannot be added: {found.reason}.")
    details: dict[str, Any] = {
        "name": found.name,
        ORIGIN_KEY: found.origin,
        "found_in": found.source.label,
    }
    if found.format == Format.MLX:
        return import_folder(found.path, models_dir, link=True, cancel=cancel, details=details)
    if found.ollama is not None:
        details |= ollama_details(found.ollama)
    return import_gguf_file(
        found.path,
        models_dir,
        progress=progress,
        cancel=cancel,
        name=found.name,
        details={**details, "source": f"Imported from {found.source.label}: {found.path}"},
    )


def ollama_details(layers: OllamaLayers) -> dict[str, Any]:
    """What an entry keeps of Ollama's layers: its defaults, and the Go template for
    reference (never run)."""
    params = {
        ours: layers.params[theirs]
        for theirs, ours in _OLLAMA_PARAMS.items()
        if isinstance(layers.params.get(theirs), int | float)
        and not isinstance(layers.params.get(theirs), bool)
    }
    stop = layers.params.get("stop")
    stops = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []
    words = [word for word in stops if isinstance(word, str) and word]
    if words:
        params["stop"] = words
    details: dict[str, Any] = {DEFAULTS_KEY: {"system_prompt": layers.system, "params": params}}
    if layers.template:
        details["ollama_template"] = layers.template
    return details
