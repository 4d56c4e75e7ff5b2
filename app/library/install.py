"""Adding entries to the model library: MLX folders copied or linked, GGUF files imported, the
built-in default imported on first start, and the work folders of unfinished imports cleared.

New entries are assembled in a hidden folder inside the models folder and renamed into place when
complete, so the library never shows half a model. Each new entry records whether mlx-lm supports
its model type (`app.library.model_support`), which imports mlx-lm: so every function here that adds
an entry runs off the GUI thread. Importing a GGUF runs MLX, so `import_gguf_file` and
`ensure_default_model` belong on the inference worker thread, and they import `inference` only when
called.
"""

from __future__ import annotations

import errno
import shutil
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from app.library.embedded_model import embedded_gguf_path
from app.library.entries import list_models
from app.library.entry_metadata import write_metadata
from app.library.folder_deep_check import check_model_folder
from app.library.isolated import run_isolated
from app.library.model_check import (
    Cancelled,
    LibraryError,
    check_config,
    read_json,
    validate_folder,
)
from app.library.model_support import SUPPORT_KEY, check_supported
from inference.embedding.folder import is_embedding_folder
from inference.loading.model_files import is_model_file, needs_remote_code

DEFAULT_MODEL_NAME = "SmolLM2 135M Instruct"
_COPY_CHUNK = 16 * 1024 * 1024
# Work folders of an import that a quit or crash cut short (`staging` here, `.import-` in the
# GGUF importer). Partial downloads (`.download-`) are kept: a later download resumes from them.
_ABANDONED_PREFIXES = (".staging-", ".import-")

Progress = Callable[[int, int], None]


def remove_abandoned_work(models_dir: str | Path) -> list[Path]:
    """Delete work folders left by imports that never finished; call at start-up, before any
    import runs. Returns what was removed."""
    models = Path(models_dir)
    if not models.is_dir():
        return []
    abandoned = [
        p for p in models.iterdir() if p.is_dir() and p.name.startswith(_ABANDONED_PREFIXES)
    ]
    for folder in abandoned:
        shutil.rmtree(folder, ignore_errors=True)
    return abandoned


@contextmanager
def staging(models_dir: str | Path) -> Iterator[Path]:
    """A hidden work folder inside the models folder (the same disk, so `install` is a rename),
    removed on the way out whether or not its contents were installed."""
    area = Path(models_dir) / f".staging-{uuid.uuid4().hex}"
    area.mkdir(parents=True)
    try:
        yield area
    finally:
        shutil.rmtree(area, ignore_errors=True)


def install(built: Path, models_dir: str | Path, name: str) -> Path:
    """Move a finished folder into the library under a free folder name based on `name`."""
    base = "".join(c if c.isalnum() or c in "._-" else "-" for c in name).strip(".-") or "model"
    final, number = Path(models_dir) / base, 2
    while final.exists():
        final, number = Path(models_dir) / f"{base}-{number}", number + 1
    built.rename(final)
    return final


def import_folder(
    source: str | Path,
    models_dir: str | Path,
    link: bool = False,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """Add an MLX model folder to the library, after checking it; return the new entry.

    With `link`, the entry points at the folder where it is (nothing is copied, and deleting the
    entry leaves the folder alone); otherwise the model's files are copied (progress in bytes,
    cancellable). Raises LibraryError; a failed or cancelled copy adds nothing. Imports mlx-lm
    to check the model type: not on the GUI thread.
    """
    folder = Path(source).expanduser().resolve()
    support = check_supported(validate_folder(folder), is_embedding_folder(folder))
    check_model_folder(folder, cancel)
    try:
        with staging(models_dir) as area:
            entry = area / "entry"
            entry.mkdir()
            if link:
                source_label, linked = f"Linked to {folder}", {"linked_path": str(folder)}
            else:
                _copy_model_files(folder, entry, progress, cancel)
                source_label, linked = f"Copied from {folder}", {}
            write_metadata(entry, source=source_label, **linked, **{SUPPORT_KEY: support})
            return install(entry, models_dir, folder.name)
    except OSError as error:
        raise _disk_error(error, models_dir) from error


def _copy_model_files(
    source: Path, target: Path, progress: Progress | None, cancel: threading.Event | None
) -> None:
    files = [p for p in sorted(source.iterdir()) if p.is_file() and is_model_file(p.name)]
    # An embedding model's step folders ("1_Pooling/config.json"), one level down.
    steps = [p for p in sorted(source.glob("*/*")) if p.is_file()]
    files += [p for p in steps if is_model_file(p.relative_to(source).as_posix())]
    total, done = sum(p.stat().st_size for p in files), 0
    for file in files:
        copy = target / file.relative_to(source)
        copy.parent.mkdir(exist_ok=True)
        with file.open("rb") as reader, copy.open("wb") as writer:
            while chunk := reader.read(_COPY_CHUNK):
                if cancel is not None and cancel.is_set():
                    raise Cancelled("The import was cancelled.")
                writer.write(chunk)
                done += len(chunk)
                if progress is not None:
                    progress(done, total)


def _disk_error(error: OSError, models_dir: str | Path) -> LibraryError:
    if error.errno == errno.ENOSPC:
        free = shutil.disk_usage(models_dir).free / 1e9
        return LibraryError(
            f"The disk is full ({free:.2f} GB free in {models_dir}); nothing was added. "
            "Free some space and try again."
        )
    return LibraryError(f"Could not write to {models_dir}: {error.strerror or error}")


def is_published_dhara(folder: str | Path) -> bool:
    """Whether `folder` is a Dhara checkpoint as published (its config names its own code): it
    is converted into a new entry by `import_dhara_folder`, never copied or linked as it is."""
    try:
        config = read_json(Path(folder) / "config.json") or {}
    except LibraryError:
        return False
    return config.get("model_type") == "dhara" and needs_remote_code(config, {})


def import_dhara_folder(
    source: str | Path,
    models_dir: str | Path,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """Convert a published Dhara checkpoint into a new library entry (runs MLX: call it on the
    inference worker). Its code is never run. Raises inference's ModelLoadError for a folder that
    cannot be converted; nothing is added then."""
    from inference import import_dhara

    folder = Path(source).expanduser().resolve()
    with staging(models_dir) as area:
        converted = import_dhara(folder, area, progress=progress, cancel=cancel)
        support = check_supported(check_config(converted))
        write_metadata(
            converted,
            name=folder.name,
            source=f"Converted from {folder}",
            **{SUPPORT_KEY: support},
        )
        return install(converted, models_dir, folder.name)


def import_gguf_file(
    gguf_path: str | Path,
    models_dir: str | Path,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    name: str | None = None,
    builtin: bool = False,
) -> Path:
    """Import a GGUF file as a new library entry, in a child process (app/isolated.py) so that a
    file that crashes MLX's reader cannot take the app down. Call it on the inference worker:
    it imports `inference` for its errors.

    Raises inference's ModelLoadError for a file that cannot be imported; nothing is added then.
    """
    from inference.errors import ModelLoadError
    from inference.importing.model_folder import ImportCancelled

    source = Path(gguf_path).expanduser()
    with staging(models_dir) as area:
        # In a child process: a file that crashes MLX's reader cannot take the app down.
        folder = run_isolated(
            "inference.importing.gguf_import:import_gguf",
            source,
            area,
            label=source.name,
            failure=ModelLoadError,
            cancelled=ImportCancelled,
            progress=progress,
            cancel=cancel,
        )
        label = f"Built in ({source.name})" if builtin else f"Imported from {source}"
        support = check_supported(check_config(folder))
        write_metadata(
            folder,
            name=name or source.stem,
            source=label,
            builtin=builtin,
            **{SUPPORT_KEY: support},
        )
        return install(folder, models_dir, folder.name)


def ensure_default_model(models_dir: str | Path, progress: Progress | None = None) -> Path:
    """The built-in default model's folder, imported from the embedded SmolLM2 GGUF the first
    time (no network needed) and reused afterwards. Runs MLX the first time: worker thread.
    It brings the model back if the person deleted it, so call it when there is no model to
    open, not on every start."""
    for info in list_models(models_dir):
        if info.builtin and info.problem is None:
            return info.path
    source = embedded_gguf_path()
    if source is None:
        raise LibraryError("This installation has no built-in model; add one from the library.")
    return import_gguf_file(source, models_dir, progress, name=DEFAULT_MODEL_NAME, builtin=True)
