"""Models in an ordinary folder tree (LM Studio's `publisher/repository/` folders, or any folder
the person picks): MLX folders and GGUF files, a few levels down, each read from its small
parts only."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from app.discovery.describe import describe_folder, describe_gguf, unreadable
from app.discovery.found import FoundModel, Source

# LM Studio keeps models two levels down (publisher/repository); a picked folder may be a few
# more. Deeper trees are not model stores.
MAX_DEPTH = 5
# A split GGUF's later parts (`-00002-of-00003.gguf`): the first part stands for the model.
_LATER_PART = re.compile(r"-0*([2-9]|\d{2,})-of-\d+\.gguf$", re.IGNORECASE)
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")


def walk(
    root: Path,
    source: Source,
    stop: Callable[[], bool] = lambda: False,
    max_depth: int = MAX_DEPTH,
) -> Iterator[FoundModel]:
    """Every model under `root`, and every folder there that could not be read."""
    seen: set[Path] = set()
    pending = [(root, 0)]
    while pending and not stop():
        folder, depth = pending.pop()
        try:
            real = folder.resolve()
            if real in seen:  # a link back up the tree
                continue
            seen.add(real)
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as error:
            yield unreadable(folder, source, _no_access(error))
            continue
        names = {entry.name for entry in entries}
        if "config.json" in names and any(n.endswith(_WEIGHT_SUFFIXES) for n in names):
            yield describe_folder(folder, source, _display_name(root, folder))
            continue
        for entry in entries:
            if entry.name.lower().endswith(".gguf") and not _LATER_PART.search(entry.name):
                if stop():
                    return
                yield describe_gguf(Path(entry.path), source, entry.name[: -len(".gguf")])
        if depth < max_depth:
            pending.extend(
                (Path(entry.path), depth + 1)
                for entry in reversed(entries)
                if not entry.name.startswith(".") and _is_dir(entry)
            )


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _display_name(root: Path, folder: Path) -> str:
    try:
        relative = folder.relative_to(root)
    except ValueError:
        return folder.name
    return str(relative) if relative.parts else folder.name


def _no_access(error: OSError) -> str:
    if isinstance(error, PermissionError):
        return "this folder cannot be read (no permission), so any models in it are not listed"
    return f"this folder cannot be read: {error.strerror or error}"
