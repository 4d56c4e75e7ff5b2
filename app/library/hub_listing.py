"""What a download of a Hugging Face repository would fetch, asked of the hub's API before a
single file is transferred: the files (with their sizes) and what the repository's config says
the model is.

The downloader fetches exactly the files listed here, so the download dialog's preview and the
download itself never disagree. Network work: call it off the GUI thread. huggingface_hub is
slow to import, so the UI imports this module only when someone checks or downloads.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from huggingface_hub import HfApi
from huggingface_hub.errors import (
    GatedRepoError,
    HFValidationError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from app.library.model_check import LibraryError
from inference.loading.model_files import WEIGHTS_PATTERN, is_model_file


class DownloadError(LibraryError):
    """A download (or the check before it) that failed; the message says why."""


@dataclass(frozen=True)
class RepoListing:
    """The files a download of `repo_id` at `commit` fetches, name -> bytes."""

    repo_id: str
    commit: str | None
    files: dict[str, int]
    model_type: str | None  # from the hub's summary of config.json, when it has one
    architecture: str | None
    gated: bool  # the download needs the repository's terms accepted and a login

    @property
    def total_bytes(self) -> int:
        return sum(self.files.values())

    @property
    def weights_bytes(self) -> int:
        return sum(size for name, size in self.files.items() if is_weights(name))


def is_weights(name: str) -> bool:
    return fnmatch.fnmatch(name, WEIGHTS_PATTERN)


def list_repository(repo_id: str, endpoint: str | None = None) -> RepoListing:
    """Ask the hub what downloading `repo_id` would fetch. `endpoint` replaces
    https://huggingface.co (a mirror, or tests).

    Raises DownloadError, in words for the person using the app, for a repository that does not
    exist, is gated, has no config.json or no safetensors weights, and when the hub cannot be
    reached."""
    repo_id = repo_id.strip()
    with readable_hub_errors(repo_id, lambda error: _unreachable(repo_id, error)):
        info = HfApi(endpoint=endpoint).model_info(repo_id, files_metadata=True)
    # Files by their path (snapshot_download is given each name escaped, so a top-level pattern
    # never takes a subfolder's file): the top level, and an embedding model's step folders.
    files = {s.rfilename: s.size or 0 for s in info.siblings or [] if is_model_file(s.rfilename)}
    _check_repository(repo_id, files)
    config = info.config if isinstance(info.config, dict) else {}
    architectures = config.get("architectures") or [None]
    return RepoListing(
        repo_id=repo_id,
        commit=info.sha,
        files=dict(sorted(files.items())),
        model_type=_text(config.get("model_type")),
        architecture=_text(architectures[0]) if isinstance(architectures, list) else None,
        gated=bool(info.gated),
    )


def _text(value: object) -> str | None:
    """A string from the hub's summary of config.json (which the repository's owner wrote)."""
    return value if isinstance(value, str) else None


def _check_repository(repo_id: str, files: dict[str, int]) -> None:
    if "config.json" not in files:
        raise DownloadError(f"{repo_id} has no config.json, so it is not a model mlx-lm can load.")
    if not any(is_weights(name) for name in files):
        raise DownloadError(
            f"{repo_id} has no safetensors weights ({WEIGHTS_PATTERN}). Look for an MLX "
            "version of it (e.g. under mlx-community), or download a .gguf file and import it."
        )


def _unreachable(repo_id: str, error: Exception) -> str:
    return (
        f"Could not ask Hugging Face about {repo_id} ({error}). Check the network connection "
        "and try again."
    )


@contextmanager
def readable_hub_errors(repo_id: str, failed: Callable[[Exception], str]) -> Iterator[None]:
    """Turn the hub client's exceptions into messages for the person using the app; `failed`
    words any other error (the network's, the disk's)."""
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
    except Exception as error:  # the HTTP client's connection and protocol errors, the disk's
        raise DownloadError(failed(error)) from error
