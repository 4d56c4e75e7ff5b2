"""One model folder or GGUF file described from its small parts: an MLX folder from its
config.json and file list, a GGUF from its checked header (never the tensors), and what makes
two finds the same model (`origin`).

Whether mlx-lm has code for a folder's model type is asked afterwards, for all folders of a
scan at once (`app.discovery.scan`): answering it loads MLX, which happens in a child process.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from app.discovery.found import Format, FoundModel, OllamaLayers, Source
from app.library.model_check import LibraryError, validate_folder
from app.library.model_facts import size_on_disk
from inference.errors import ModelLoadError
from inference.importing.gguf_check import check_gguf
from inference.importing.gguf_support import facts

# A GGUF's identity: its size and a digest of its first and last MiB (the header names the
# model, the tail holds its last tensors), so the same file found under two names (an Ollama
# blob and an LM Studio download) is one model, without reading gigabytes.
_SAMPLE = 1024 * 1024


def mlx_origin(folder: Path) -> str:
    return f"folder:{_resolved(folder)}"


def gguf_origin(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        digest.update(file.read(_SAMPLE))
        size = path.stat().st_size
        if size > 2 * _SAMPLE:
            file.seek(size - _SAMPLE)
            digest.update(file.read(_SAMPLE))
    return f"gguf:{size}:{digest.hexdigest()[:32]}"


def describe_folder(folder: Path, source: Source, name: str) -> FoundModel:
    """An MLX (or Hugging Face safetensors) model folder, to be used where it lies."""
    config: dict[str, object] = {}
    reason = _dangling(folder)
    if reason is None:
        try:
            config = validate_folder(folder)
        except LibraryError as error:
            reason = str(error)
    try:
        size = size_on_disk(folder)
    except OSError:
        size = 0
    return FoundModel(
        path=str(folder),
        source=source,
        format=Format.MLX,
        name=name,
        architecture=str(config.get("model_type", "unknown")),
        bytes=size,
        runnable=reason is None,
        reason=reason,
        chat_template=None,
        origin=mlx_origin(folder),
    )


def describe_gguf(
    path: Path, source: Source, name: str | None = None, ollama: OllamaLayers | None = None
) -> FoundModel:
    """A GGUF file (an Ollama blob has no .gguf suffix), from its header alone."""
    try:
        size = path.stat().st_size
        header = check_gguf(path, keep_lists=())
        origin = gguf_origin(path)
    except (ModelLoadError, OSError) as error:
        return _unreadable(path, source, name or path.stem, Format.GGUF, _why(error), ollama)
    found = facts(header, path.stem)
    return FoundModel(
        path=str(path),
        source=source,
        format=Format.GGUF,
        name=name or found.name,
        architecture=found.architecture,
        bytes=size,
        runnable=found.runnable,
        reason=found.reason,
        disk_needed=found.imported_bytes,
        chat_template=found.chat_template,
        origin=origin,
        ollama=ollama,
    )


def unreadable(path: Path, source: Source, reason: str) -> FoundModel:
    """Something that may hold models but could not be read (a folder without access)."""
    return _unreadable(path, source, path.name or str(path), Format.UNKNOWN, reason, None)


def _unreadable(
    path: Path,
    source: Source,
    name: str,
    kind: Format,
    reason: str,
    ollama: OllamaLayers | None,
) -> FoundModel:
    return FoundModel(
        path=str(path),
        source=source,
        format=kind,
        name=name,
        architecture="unknown",
        bytes=0,
        runnable=False,
        reason=reason,
        ollama=ollama,
    )


def _why(error: Exception) -> str:
    if isinstance(error, PermissionError):
        return "it cannot be read (no permission)"
    if isinstance(error, OSError):
        return f"it cannot be read: {error.strerror or error}"
    return str(error)


def _dangling(folder: Path) -> str | None:
    """The reason a folder whose files are links (a Hugging Face snapshot) cannot load: a link
    whose target is gone."""
    try:
        entries = list(folder.iterdir())
    except OSError as error:
        return _why(error)
    gone = sorted(p.name for p in entries if p.is_symlink() and not p.exists())
    if gone:
        return (
            f"{', '.join(gone[:3])} links to a file that is gone (a removed or unfinished download)"
        )
    return None


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path.absolute()
