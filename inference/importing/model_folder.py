"""Writing a new model folder into the models folder, whatever it is converted from.

An import (a GGUF file, a Dhara checkpoint) assembles its folder in a hidden work folder inside the
models folder, so the library never lists half a model, and renames it into place under a free
name once complete. A full disk, a cancel or a file the conversion cannot use leaves nothing
behind and becomes a `ModelLoadError` written for the person.
"""

from __future__ import annotations

import errno
import shutil
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

from inference.errors import ModelLoadError

# (steps done, steps in all); raises ImportCancelled to stop.
Progress = Callable[[int, int], None]


class ImportCancelled(ModelLoadError):
    """The person cancelled the import; nothing was added."""


def reporter(progress: Progress | None, cancel: threading.Event | None) -> Progress:
    """A progress callback that also stops the import when `cancel` is set."""

    def report(done: int, total: int) -> None:
        if cancel is not None and cancel.is_set():
            raise ImportCancelled("The import was cancelled.")
        if progress is not None:
            progress(done, total)

    return report


def write_model_folder(
    models_dir: str | Path,
    name: str,
    source_name: str,
    write: Callable[[Path], None],
    space_needed: int = 0,
) -> Path:
    """Run `write(folder)` into a hidden work folder, then move it to `models_dir/<name>` (or
    `<name>-2`, ...) and return it. `source_name` names the import in messages; `space_needed`
    (bytes) is checked before anything is written."""
    models = Path(models_dir)
    staging = models / f".import-{uuid.uuid4().hex}"
    try:
        models.mkdir(parents=True, exist_ok=True)
        if shutil.disk_usage(models).free < space_needed:
            raise OSError(errno.ENOSPC, "not enough free space")
        staging.mkdir()
        write(staging)
        final = free_name(models, name)
        staging.rename(final)
        return final
    except OSError as error:
        if error.errno == errno.ENOSPC:
            needed = f"it needs about {space_needed / 1e9:.2f} GB, and " if space_needed else ""
            free = shutil.disk_usage(models).free / 1e9
            raise ModelLoadError(
                f"Not enough disk space to import {source_name}: {needed}{free:.2f} GB is free "
                f"in {models}. Nothing was added."
            ) from error
        raise ModelLoadError(f"Could not import {source_name}: {error}") from error
    except ModelLoadError:
        raise
    except Exception as error:  # damaged metadata or weights break a conversion in many ways
        raise ModelLoadError(f"{source_name} could not be converted: {error}") from error
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def free_name(models: Path, name: str) -> Path:
    """`models/name`, or the first of `name-2`, `name-3`, ... that does not exist yet."""
    candidate, number = models / name, 2
    while candidate.exists():
        candidate, number = models / f"{name}-{number}", number + 1
    return candidate
