"""A scan: every location read in its app's layout, the folders' model types checked against
mlx-lm in one child process, and each find marked when the library has it already.

Reading is headers and small files only (see `app.discovery.describe`); the one costly step is
the model-type check, which imports mlx-lm once per scan, in a child process so the app never
loads MLX off the inference worker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from app.discovery.folders import walk
from app.discovery.found import Format, FoundModel, Source
from app.discovery.hf_cache import scan_cache
from app.discovery.locations import Location
from app.discovery.ollama import scan_store
from app.library.isolated import run_isolated
from app.library.model_check import Cancelled, LibraryError
from app.library.origins import library_origins

# (models found so far, the location being read)
ScanProgress = Callable[[int, str], None]
# The type check imports mlx-lm in a fresh process: seconds, never minutes.
_SUPPORT_LIMIT_S = 120.0


def read_location(location: Location, stop: Callable[[], bool]) -> Iterator[FoundModel]:
    """Everything in one location, read as its source's layout."""
    if location.source == Source.HUGGINGFACE:
        return scan_cache(location.path, stop)
    if location.source == Source.OLLAMA:
        return scan_store(location.path, stop)
    return walk(location.path, location.source, stop)


def scan(
    locations: Iterable[Location],
    models_dir: Path | None = None,
    progress: ScanProgress | None = None,
    stop: Callable[[], bool] = lambda: False,
    check_types: bool = True,
) -> list[FoundModel]:
    """Every model in `locations`, runnable ones first within each source. With `models_dir`,
    finds already in that library name their entry; with `check_types`, MLX folders whose
    model type mlx-lm lacks are marked so (one child process for the whole scan)."""
    found: list[FoundModel] = []
    for location in locations:
        for model in read_location(location, stop):
            found.append(model)
            if progress is not None:
                progress(len(found), str(location.path))
        if stop():
            raise Cancelled("The scan was cancelled.")
    if check_types:
        found = _with_type_support(found)
    if models_dir is not None:
        origins = library_origins(models_dir)
        found = [replace(m, in_library=origins.get(m.origin)) if m.origin else m for m in found]
    return found


def _with_type_support(found: list[FoundModel]) -> list[FoundModel]:
    folders = sorted({m.path for m in found if m.format == Format.MLX and m.runnable})
    if not folders:
        return found
    try:
        problems: dict[str, str | None] = run_isolated(
            "app.library.model_support:folder_problems",
            folders,
            label="the model types",
            failure=LibraryError,
            cancelled=Cancelled,
            timeout_s=_SUPPORT_LIMIT_S,
        )
    except LibraryError:
        return found  # unchecked: adding one checks it again and says why it cannot load
    return [
        replace(m, runnable=False, reason=problems[m.path]) if problems.get(m.path) else m
        for m in found
    ]
