"""Download a model from the Hugging Face hub into the library, by repository id.

huggingface_hub's `snapshot_download` does the transfer: only the files a model needs
(`inference.loading.model_files`: no PyTorch pickles, no duplicate consolidated weights, no README
images), exactly those `app.library.hub_listing` lists for the download dialog's preview, into a
hidden folder inside the models folder that outlives a cancel, a full disk or a crash. A later
download of the same repository skips every file already complete (its local metadata names the
commit) and the hub client resumes a connection that drops mid-file with a Range request; a file cut
short by a cancel is discarded by huggingface_hub, so it starts over. The small files come first, so
a repository whose config mlx-lm cannot load is refused before its weights are downloaded. When
everything has arrived and the folder checks out, it is renamed into the library in one step. File
and network work, and the model-type check imports mlx-lm: it may run on any thread but the GUI's.
"""

from __future__ import annotations

import errno
import glob
import shutil
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from huggingface_hub import snapshot_download
from huggingface_hub.utils import tqdm

from app.library.download_fit import bytes_to_fetch, free_disk_bytes
from app.library.entry_metadata import write_metadata
from app.library.folder_deep_check import check_model_folder
from app.library.hub_listing import DownloadError, is_weights, list_repository, readable_hub_errors
from app.library.install import install
from app.library.model_check import LibraryError, check_config, validate_folder
from app.library.model_support import SUPPORT_KEY, check_supported
from inference.embedding.folder import is_embedding_folder

Progress = Callable[[int, int], None]
# snapshot_download's bar of bytes written to disk, summed over its files (the others count
# network bytes, which may differ, and files).
_BYTES_BAR = "huggingface_hub.snapshot_download"


class DownloadCancelled(DownloadError):
    """The person cancelled; the files already complete are kept for the next try."""


def partial_folder(repo_id: str, models_dir: str | Path) -> Path:
    """Where an unfinished download of `repo_id` keeps its files (hidden from the library)."""
    return Path(models_dir) / f".download-{repo_id.replace('/', '--')}"


def discard_partial(repo_id: str, models_dir: str | Path) -> None:
    """Forget an unfinished download, freeing its disk space."""
    shutil.rmtree(partial_folder(repo_id, models_dir), ignore_errors=True)


def download_model(
    repo_id: str,
    models_dir: str | Path,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    endpoint: str | None = None,
) -> Path:
    """Download the model `repo_id` (e.g. "mlx-community/Qwen3-0.6B-4bit") into the library
    and return its new folder. `progress(done_bytes, total_bytes)`; setting `cancel` stops it
    with DownloadCancelled. `endpoint` replaces https://huggingface.co (a mirror, or tests).

    Raises DownloadError for a repository that does not exist, is gated, has no usable MLX
    weights or a model type mlx-lm cannot load, for network failures and a full disk. Nothing is
    added to the library unless the whole model arrived.
    """
    listing = list_repository(repo_id, endpoint)
    repo_id, sizes = listing.repo_id, listing.files
    folder = partial_folder(repo_id, models_dir)
    folder.mkdir(parents=True, exist_ok=True)
    _check_space(repo_id, models_dir, folder, sizes)
    transfer = _Transfer(sizes, folder, progress, cancel)

    def fetch(names: list[str]) -> None:
        transfer.start_pass()
        with _readable_errors(repo_id, models_dir):
            snapshot_download(
                repo_id,
                revision=listing.commit,  # both passes fetch the same commit
                local_dir=folder,
                endpoint=endpoint,
                allow_patterns=[glob.escape(name) for name in names],
                tqdm_class=transfer.bar_class(),
            )

    weights = {name for name in sizes if is_weights(name)}
    fetch(sorted(set(sizes) - weights))
    # Before the weights, which are most of the bytes.
    support = _check(
        repo_id,
        lambda: check_supported(check_config(folder), is_embedding_folder(folder)),
        folder,
    )
    fetch(sorted(sizes))  # the small files, complete now, are skipped
    _check(repo_id, lambda: validate_folder(folder), folder)
    _check(repo_id, lambda: check_model_folder(folder), folder)
    shutil.rmtree(folder / ".cache", ignore_errors=True)  # huggingface_hub's resume bookkeeping
    name = repo_id.rpartition("/")[2]
    write_metadata(folder, name=name, source=f"Hugging Face: {repo_id}", **{SUPPORT_KEY: support})
    return install(folder, models_dir, name)


def _check(repo_id: str, check: Callable[[], Any], folder: Path) -> Any:
    try:
        return check()
    except LibraryError as error:
        shutil.rmtree(folder, ignore_errors=True)  # nothing in it is worth resuming
        raise DownloadError(f"{repo_id} cannot be used: {error}") from error


def _check_space(repo_id: str, models_dir: str | Path, folder: Path, sizes: dict[str, int]) -> None:
    needed = bytes_to_fetch(sizes, folder)
    free = free_disk_bytes(Path(models_dir))
    if needed > free:
        raise DownloadError(
            f"Not enough disk space for {repo_id}: it needs {needed / 1e9:.2f} GB more and "
            f"{free / 1e9:.2f} GB is free."
        )


class _Transfer:
    """Bytes done across all files, fed by snapshot_download's progress bars; also where a
    cancel takes effect, since the hub client updates a bar after every chunk it writes."""

    def __init__(
        self,
        sizes: dict[str, int],
        folder: Path,
        progress: Progress | None,
        cancel: threading.Event | None,
    ) -> None:
        self.sizes, self.folder = sizes, folder
        self.total, self.done = sum(sizes.values()), 0
        self.progress, self.cancel = progress, cancel
        self.lock = threading.Lock()  # snapshot_download fetches files on several threads

    def start_pass(self) -> None:
        # A file at its final path is complete (huggingface_hub writes into .cache first), and
        # snapshot_download skips it without a progress update: count it as done.
        present = [name for name in self.sizes if (self.folder / name).is_file()]
        with self.lock:
            self.done = sum(self.sizes[name] for name in present)
        self.report(0)

    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise DownloadCancelled("The download was cancelled; try again to resume it.")

    def report(self, written: int) -> None:
        self.check_cancel()
        with self.lock:
            self.done += written
            done = min(self.done, self.total)
        if self.progress is not None:
            self.progress(done, self.total)

    def bar_class(self) -> type[tqdm]:
        report, check_cancel = self.report, self.check_cancel

        class Bar(tqdm):  # a silent bar: the app shows progress its own way
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                self.counts_bytes = kwargs.get("name") == _BYTES_BAR
                kwargs["disable"] = True
                super().__init__(*args, **kwargs)

            def update(self, n: float | None = 1) -> bool | None:
                if self.counts_bytes:
                    report(int(n or 0))
                else:
                    check_cancel()
                return super().update(n)

        return Bar


def _readable_errors(repo_id: str, models_dir: str | Path) -> AbstractContextManager[None]:
    """The hub client's and the disk's exceptions as messages for the person using the app."""

    def failed(error: Exception) -> str:
        if isinstance(error, OSError) and error.errno == errno.ENOSPC:
            return (
                f"The disk is full, so {repo_id} could not be downloaded. Free some space in "
                f"{models_dir} and try again: the files already complete are kept."
            )
        return (
            f"The download of {repo_id} failed ({error}). Try again: the files already complete "
            "are kept."
        )

    return readable_hub_errors(repo_id, failed)
