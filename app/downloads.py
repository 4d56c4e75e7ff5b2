"""Download a model from the Hugging Face hub into the library, by repository id.

Only the files a model needs are fetched (the library's MODEL_FILE_PATTERNS: no PyTorch pickles,
no duplicate consolidated weights, no README images), small files first, so a repository whose
config mlx-lm cannot load is refused before its weights are downloaded. Files land in a hidden
folder inside the models folder that outlives a cancel, a full disk or a crash: a later download
of the same repository keeps every file already complete (huggingface_hub checks it against the
hub and skips it) and the hub client resumes a connection that drops mid-file with a Range
request. A file cut short by a cancel is discarded by huggingface_hub itself, so it starts over.
When everything has arrived and the folder checks out, it is renamed into the library in one
step. Plain file and network work, no MLX: it may run on any thread but the GUI's.
"""

from __future__ import annotations

import errno
import fnmatch
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import (
    GatedRepoError,
    HFValidationError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from tqdm import tqdm

from app.library import (
    MODEL_FILE_PATTERNS,
    LibraryError,
    check_config,
    install,
    validate_folder,
    write_metadata,
)
from app.model_check import check_model_folder

Progress = Callable[[int, int], None]
_WEIGHTS = "model*.safetensors"


class DownloadError(LibraryError):
    """A download that failed; the message says why and whether trying again resumes it."""


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
    repo_id = repo_id.strip()
    with _readable_errors(repo_id, models_dir):
        info = HfApi(endpoint=endpoint).model_info(repo_id, files_metadata=True)
    sizes = {
        s.rfilename: s.size or 0
        for s in info.siblings or []
        if "/" not in s.rfilename and _needed(s.rfilename)
    }
    _check_repository(repo_id, sizes)
    folder = partial_folder(repo_id, models_dir)
    folder.mkdir(parents=True, exist_ok=True)
    _check_space(repo_id, models_dir, folder, sizes)
    transfer = _Transfer(sum(sizes.values()), progress, cancel)

    def fetch(name: str) -> None:
        transfer.start_file()
        with _readable_errors(repo_id, models_dir):
            hf_hub_download(
                repo_id,
                name,
                revision=info.sha,
                local_dir=folder,
                endpoint=endpoint,
                tqdm_class=transfer.bar_class(),
            )
        transfer.finish_file(sizes[name])

    weights = sorted(name for name in sizes if fnmatch.fnmatch(name, _WEIGHTS))
    for name in sorted(set(sizes) - set(weights)):
        fetch(name)
    _check(repo_id, check_config, folder)  # before the weights, which are most of the bytes
    for name in weights:
        fetch(name)
    _check(repo_id, validate_folder, folder)
    _check(repo_id, check_model_folder, folder)
    shutil.rmtree(folder / ".cache", ignore_errors=True)  # huggingface_hub's resume bookkeeping
    write_metadata(folder, name=repo_id.rpartition("/")[2], source=f"Hugging Face: {repo_id}")
    return install(folder, models_dir, repo_id.rpartition("/")[2])


def _needed(name: str) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in MODEL_FILE_PATTERNS)


def _check_repository(repo_id: str, sizes: dict[str, int]) -> None:
    if "config.json" not in sizes:
        raise DownloadError(f"{repo_id} has no config.json, so it is not a model mlx-lm can load.")
    if not any(fnmatch.fnmatch(name, _WEIGHTS) for name in sizes):
        raise DownloadError(
            f"{repo_id} has no safetensors weights (model*.safetensors). Look for an MLX "
            "version of it (e.g. under mlx-community), or download a .gguf file and import it."
        )


def _check(repo_id: str, check: Callable[[Path], Any], folder: Path) -> None:
    try:
        check(folder)
    except LibraryError as error:
        shutil.rmtree(folder, ignore_errors=True)  # nothing in it is worth resuming
        raise DownloadError(f"{repo_id} cannot be used: {error}") from error


def _check_space(repo_id: str, models_dir: str | Path, folder: Path, sizes: dict[str, int]) -> None:
    present = sum((folder / n).stat().st_size for n in sizes if (folder / n).is_file())
    needed = sum(sizes.values()) - present
    free = shutil.disk_usage(models_dir).free
    if needed > free:
        raise DownloadError(
            f"Not enough disk space for {repo_id}: it needs {needed / 1e9:.2f} GB more and "
            f"{free / 1e9:.2f} GB is free."
        )


class _Transfer:
    """Bytes done across all files, fed by huggingface_hub's progress bars; also where a cancel
    takes effect, since the hub client calls `update` after every chunk it writes."""

    def __init__(self, total: int, progress: Progress | None, cancel: threading.Event | None):
        self.total, self.done, self.current = total, 0, 0
        self.progress, self.cancel = progress, cancel

    def start_file(self) -> None:
        self.current = 0
        self._report(0)

    def finish_file(self, size: int) -> None:
        self.done += size
        self.current = 0
        self._report(0)

    def _report(self, received: int) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise DownloadCancelled("The download was cancelled; try again to resume it.")
        self.current += received
        if self.progress is not None:
            self.progress(min(self.done + self.current, self.total), self.total)

    def bar_class(self) -> type[tqdm]:
        report = self._report

        class Bar(tqdm):  # a silent bar: the app shows progress its own way
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                kwargs["disable"] = True
                super().__init__(*args, **kwargs)

            def update(self, n: float | None = 1) -> bool | None:
                report(int(n or 0))
                return super().update(n)

        return Bar


@contextmanager
def _readable_errors(repo_id: str, models_dir: str | Path) -> Iterator[None]:
    """Turn the hub client's exceptions into messages for the person using the app."""
    try:
        yield
    except LibraryError:
        raise
    except GatedRepoError as error:
        raise DownloadError(
            f"{repo_id} is gated: accept its terms on huggingface.co and log in with "
            "`hf auth login`, then try again."
        ) from error
    except RepositoryNotFoundError as error:
        raise DownloadError(
            f"There is no model '{repo_id}' on Hugging Face (check the spelling; a private "
            "model needs `hf auth login`)."
        ) from error
    except RevisionNotFoundError as error:
        raise DownloadError(f"{repo_id} has no such revision.") from error
    except HFValidationError as error:
        raise DownloadError(
            f"'{repo_id}' is not a repository id; it looks like owner/name."
        ) from error
    except OSError as error:
        if error.errno == errno.ENOSPC:
            raise DownloadError(
                f"The disk is full, so {repo_id} could not be downloaded. Free some space in "
                f"{models_dir} and try again: the files already complete are kept."
            ) from error
        raise DownloadError(_failed(repo_id, error)) from error
    except Exception as error:  # the HTTP client's connection and protocol errors
        raise DownloadError(_failed(repo_id, error)) from error


def _failed(repo_id: str, error: Exception) -> str:
    return (
        f"The download of {repo_id} failed ({error}). Try again: the files already complete "
        "are kept."
    )
