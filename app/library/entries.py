"""The model library: the model folders inside the models folder, described, renamed and deleted.

Each entry is one folder; a small `branchwise.json` in it (`app.library.entry_metadata`) keeps what
the model files do not say: the display name, where the model came from, for a folder linked in
place where its files are, and whether mlx-lm supports its type (`app.library.model_support`).
Everything here is plain file work, so the GUI thread can list models without loading MLX. Adding
entries is `app.library.install`'s job; checking a folder is `app.library.model_check`'s.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import psutil

from app.library.cpu_weights import running_weights_bytes
from app.library.entry_metadata import DEFAULTS_KEY, read_metadata, write_metadata
from app.library.model_check import LibraryError, read_json, validate_folder
from app.library.model_facts import (
    CHAT_TEMPLATE_KEY,
    parameter_count,
    quantization_label,
    size_on_disk,
)
from app.library.model_support import recorded_problem
from inference.embedding.folder import is_embedding_folder, read_embedding_folder
from inference.errors import ModelLoadError
from inference.loading.model_files import WEIGHTS_PATTERN, context_length
from inference.speech.support import is_speech_config, speech_weights
from inference.vision.support import is_vision_config, text_only_reason


class ModelKind(StrEnum):
    """What a library entry is for: chats, turning speech into text (a Whisper folder), or
    reading documents for knowledge folders (an embedding model)."""

    CHAT = "chat"
    SPEECH = "speech"
    EMBEDDING = "embedding"


@dataclass(frozen=True)
class ModelInfo:
    """One library entry, as the model list shows it."""

    id: str  # the entry's folder name, stable across renames
    folder: Path  # the entry's folder inside the models folder
    path: Path  # where the model files are: `folder`, or the original of a linked folder
    name: str
    architecture: str
    parameters: int | None
    quantization: str
    size_bytes: int
    weights_bytes: int
    context_length: int | None
    source: str
    builtin: bool = False
    linked: bool = False
    problem: str | None = None  # why the entry cannot be loaded; None when it can
    # Images: "" for a text model; for a vision model whether it reads them here, or why not.
    sight: str = ""
    # An embedding model is never loaded to chat, so its `problem` says that when nothing else
    # is wrong with it.
    kind: ModelKind = ModelKind.CHAT
    # A linked folder that is gone (moved, deleted, its disk unplugged): listed, never loaded.
    missing: bool = False
    # False: a base model without a chat template (plain completions only); None: not recorded.
    chat_template: bool | None = None
    # What the model's source app gave it (Ollama): a system prompt and sampling defaults.
    defaults: ModelDefaults = field(default_factory=lambda: ModelDefaults())

    @property
    def embedding(self) -> bool:
        return self.kind == ModelKind.EMBEDDING


@dataclass(frozen=True)
class ModelDefaults:
    """A model's own defaults for new chats, kept from where it was found (Ollama's system
    prompt and parameters, in Branchwise's names: temperature, top_p, stop...)."""

    system_prompt: str = ""
    params: dict[str, Any] = field(default_factory=dict[str, Any])

    @classmethod
    def from_metadata(cls, value: object) -> ModelDefaults:
        if not isinstance(value, dict):
            return cls()
        system = value.get("system_prompt")  # pyright: ignore[reportUnknownMemberType]
        params = value.get("params")  # pyright: ignore[reportUnknownMemberType]
        return cls(
            system if isinstance(system, str) else "",
            dict(params) if isinstance(params, dict) else {},  # pyright: ignore[reportUnknownArgumentType]
        )


def describe(folder: Path) -> ModelInfo:
    """The ModelInfo of one library entry; an entry that cannot be loaded gets a `problem`."""
    meta = read_metadata(folder)
    path = Path(meta["linked_path"]) if meta.get("linked_path") else folder
    config: dict[str, Any] = {}
    problem = None
    missing = path != folder and not _exists(path)
    embedding = not missing and is_embedding_folder(path)
    if missing:
        problem = (
            f"Missing: {path} is gone (moved, deleted or on a disk that is not connected). "
            "Chats that used it keep their text; put the folder back or delete this entry."
        )
    else:
        try:
            config = validate_folder(path)
            problem = embedding_problem(path) if embedding else recorded_problem(meta, config)
        except LibraryError as error:
            problem = str(error)
    speech_file = None if missing else speech_weights(path)
    # A Whisper config names no model type the chat checks know, so it fails them: read it as
    # it is. A damaged chat model's config is no Whisper one, whatever weight file it has.
    speech = is_speech_config(config or _lenient_config(path)) and speech_file is not None
    if missing:
        weights = []
    elif speech:
        weights = [speech_file] if speech_file is not None else []
    else:
        weights = sorted(path.glob(WEIGHTS_PATTERN))
    return ModelInfo(
        id=folder.name,
        folder=folder,
        path=path,
        name=meta.get("name") or folder.name,
        architecture=str(config.get("model_type") or ("whisper" if speech else "unknown")),
        parameters=parameter_count(weights, config) if config else None,
        quantization=quantization_label(weights, config) if config else "unknown",
        size_bytes=size_on_disk(path) if not missing else 0,
        weights_bytes=sum(w.stat().st_size for w in weights),
        context_length=context_length(config),
        source=meta.get("source", "Unknown"),
        builtin=bool(meta.get("builtin")),
        linked=path != folder,
        problem=problem,
        sight=_sight(path, config),
        kind=_kind(speech=speech, embedding=embedding),
        missing=missing,
        chat_template=template
        if isinstance(template := meta.get(CHAT_TEMPLATE_KEY), bool)
        else None,
        defaults=ModelDefaults.from_metadata(meta.get(DEFAULTS_KEY)),
    )


def _lenient_config(path: Path) -> dict[str, Any]:
    try:
        return read_json(path / "config.json") or {}
    except LibraryError:
        return {}


def _exists(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # an unreadable parent, a dropped network share
        return False


def embedding_problem(path: Path) -> str:
    """What keeps the embedding model at `path` from chat: always that it is one, and first
    whatever would keep it from embedding (the person reads both in the library)."""
    try:
        read_embedding_folder(path)
    except ModelLoadError as error:
        return str(error)
    return EMBEDDING_ONLY


# An embedding model's `problem` for chat, when it can embed.
EMBEDDING_ONLY = "An embedding model: it reads documents for knowledge folders, and does not chat."


def _kind(*, speech: bool, embedding: bool) -> ModelKind:
    if speech:
        return ModelKind.SPEECH
    return ModelKind.EMBEDDING if embedding else ModelKind.CHAT


def _sight(path: Path, config: dict[str, Any]) -> str:
    if not is_vision_config(config):
        return ""
    reason = text_only_reason(path, config)
    return "Reads images" if reason is None else f"Text only: {reason}"


def list_models(models_dir: str | Path, kind: ModelKind | None = ModelKind.CHAT) -> list[ModelInfo]:
    """The entries of `kind` in the models folder (chat models unless asked; None: every
    entry), by display name. Hidden folders are work in progress."""
    models = Path(models_dir)
    if not models.is_dir():
        return []
    entries = [p for p in models.iterdir() if p.is_dir() and not p.name.startswith(".")]
    found = (describe(p) for p in entries)
    listed = [info for info in found if kind is None or info.kind == kind]
    return sorted(listed, key=lambda info: info.name.casefold())


def find_model(models_dir: str | Path, model_id: str) -> ModelInfo:
    return describe(_entry(models_dir, model_id))


def _entry(models_dir: str | Path, model_id: str) -> Path:
    folder = Path(models_dir) / model_id
    if model_id != folder.name or model_id.startswith(".") or not folder.is_dir():
        raise LibraryError(f"There is no model '{model_id}' in the library.")
    return folder


def rename_model(models_dir: str | Path, model_id: str, name: str) -> ModelInfo:
    """Give the model a new display name (its folder keeps its name)."""
    name = name.strip()
    if not name:
        raise LibraryError("A model's name cannot be empty.")
    folder = _entry(models_dir, model_id)
    write_metadata(folder, name=name)
    return describe(folder)


def delete_model(models_dir: str | Path, model_id: str) -> None:
    """Remove the entry. For a linked folder only the link goes; the original stays."""
    folder = _entry(models_dir, model_id)
    if folder.is_symlink():
        folder.unlink()
    else:
        shutil.rmtree(folder)


def memory_check(info: ModelInfo, reclaimable_bytes: int = 0, cpu_float32: str = "never") -> None:
    """Refuse a model whose weights exceed the memory available now (plus whatever unloading
    the current model, `reclaimable_bytes`, would free), saying how much is needed; counted as
    float32 where the `cpu_float32` preference will run them so (app.library.cpu_weights)."""
    available = psutil.virtual_memory().available + reclaimable_bytes
    needed = running_weights_bytes(
        info.weights_bytes, info.parameters, cpu_float32, available=available
    )
    if needed > available:
        raise LibraryError(
            f"{info.name} needs {needed / 1e9:.1f} GB of memory for its weights, but "
            f"only {available / 1e9:.1f} GB is available. Close other apps or choose a smaller "
            "model."
        )
