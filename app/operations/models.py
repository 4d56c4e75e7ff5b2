"""The model library's long jobs as operations: importing a GGUF file and converting a published
Dhara checkpoint (both run MLX, so they go to the inference worker, the one thread that may),
copying or linking an MLX folder and downloading from the hub (plain threads: they never queue
behind a reply), and the look at a repository before a download. Each addition reports how far
it is, can be cancelled (nothing is added then), and announces on success that the library
changed, so every list of models refreshes itself.

huggingface_hub takes a while to import: it is imported inside the jobs that use it, when
someone first checks or downloads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from app.library.download_fit import DownloadFit, assess_fit
from app.library.install import import_dhara_folder, import_folder, import_gguf_file
from app.library.model_check import LibraryError
from app.operations.changes import Changes
from app.operations.operation import (
    EngineQueue,
    JobContext,
    Launcher,
    Operation,
    in_thread,
    on_worker,
)

if TYPE_CHECKING:
    from app.library.hub_listing import RepoListing

# What the library refuses (its messages are written for the person) and what a disk refuses.
_REFUSALS = (LibraryError, OSError)
_LIBRARY_CHANGED = Changes(model_library=True)


@dataclass(frozen=True, slots=True)
class Transferred:
    """How far an addition is: `done` of `total` (bytes, or steps; `total` 0 while unknown)."""

    done: int
    total: int


@dataclass(frozen=True, slots=True)
class DownloadCheck:
    """What downloading a repository would fetch, and whether it fits."""

    listing: RepoListing
    fit: DownloadFit


Addition = Operation[Path, Transferred]  # its result: the new library entry's folder
_Job = Callable[[Callable[[int, int], None], JobContext[Transferred]], Path]


def addition(
    owner: QObject, description: str, job: _Job, runs_on: Launcher = in_thread
) -> Addition:
    def run(context: JobContext[Transferred]) -> Path:
        return job(lambda done, total: context.report(Transferred(done, total)), context)

    return Operation(
        owner,
        description,
        run,
        expected=_REFUSALS,
        changes=lambda _folder: _LIBRARY_CHANGED,
        runs_on=runs_on,
    )


def with_mlx_refusals(run: Callable[[], Path]) -> Path:
    """Run a job that may run MLX, inference's refusals (a damaged file, a cancel) turned into
    the library's, their words kept."""
    from inference.errors import InferenceError  # MLX-free

    try:
        return run()
    except InferenceError as error:
        raise LibraryError(str(error)) from error


def add_gguf(owner: QObject, gguf: Path, models_dir: Path, worker: EngineQueue) -> Addition:
    def job(progress: Callable[[int, int], None], context: JobContext[Transferred]) -> Path:
        return with_mlx_refusals(
            lambda: import_gguf_file(
                gguf, models_dir, progress=progress, cancel=context.cancel_event
            )
        )

    return addition(owner, f"Importing {gguf.name}", job, on_worker(worker))


def convert_dhara(owner: QObject, folder: Path, models_dir: Path, worker: EngineQueue) -> Addition:
    def job(progress: Callable[[int, int], None], context: JobContext[Transferred]) -> Path:
        return with_mlx_refusals(
            lambda: import_dhara_folder(
                folder, models_dir, progress=progress, cancel=context.cancel_event
            )
        )

    return addition(owner, f"Converting {folder.name}", job, on_worker(worker))


def add_folder(owner: QObject, folder: Path, models_dir: Path, link: bool) -> Addition:
    """Copy an MLX folder into the library, or link to it where it is."""

    def job(progress: Callable[[int, int], None], context: JobContext[Transferred]) -> Path:
        return import_folder(
            folder, models_dir, link=link, progress=progress, cancel=context.cancel_event
        )

    return addition(owner, f"{'Linking' if link else 'Copying'} {folder.name}", job)


def download_repo(
    owner: QObject, repo_id: str, models_dir: Path, endpoint: str | None = None
) -> Addition:
    """Download a repository's model files into a new entry (resumable; a cancel keeps the
    files already complete for the next try)."""

    def job(progress: Callable[[int, int], None], context: JobContext[Transferred]) -> Path:
        from app.library.downloads import download_model

        return download_model(
            repo_id, models_dir, progress=progress, cancel=context.cancel_event, endpoint=endpoint
        )

    return addition(owner, f"Downloading {repo_id}", job)


def check_download(
    owner: QObject, repo_id: str, models_dir: Path, endpoint: str | None = None
) -> Operation[DownloadCheck, None]:
    """Ask the hub which files a download of `repo_id` fetches, and see whether they fit in
    memory and on the disk; a refusal (no such model, no network) comes back in words."""

    def job(_context: JobContext[None]) -> DownloadCheck:
        from app.library.downloads import partial_folder
        from app.library.hub_listing import DownloadError, list_repository

        listing = list_repository(repo_id, endpoint)
        try:
            folder = partial_folder(listing.repo_id, models_dir)
            return DownloadCheck(listing, assess_fit(listing, folder, models_dir))
        except OSError as error:
            raise DownloadError(f"The check of {repo_id} failed: {error}") from error

    return Operation(owner, f"Checking {repo_id}", job, expected=(LibraryError,))
