"""Whether a model fits this machine before it is downloaded: its weights against the memory
(they are loaded whole), and the bytes still to fetch against the free disk of the models folder.

The downloader refuses a download the disk cannot hold with the same arithmetic, so what the
download dialog promises is what the download does.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

if TYPE_CHECKING:
    from app.library.hub_listing import RepoListing

# Weights above this share of the memory leave too little for the system, the other apps and
# the KV cache: loading may succeed, but only with everything else closed.
TIGHT_SHARE = 0.75


class MemoryFit(Enum):
    FITS = "fits"
    TIGHT = "tight"  # over TIGHT_SHARE of the memory
    TOO_BIG = "too big"  # more than the machine has: it could never load


@dataclass(frozen=True)
class DownloadFit:
    weights_bytes: int
    memory_bytes: int  # the machine's memory, all of it
    fetch_bytes: int  # still to download (files a cancelled download completed are kept)
    free_bytes: int  # free on the disk of the models folder

    @property
    def memory(self) -> MemoryFit:
        if self.weights_bytes > self.memory_bytes:
            return MemoryFit.TOO_BIG
        if self.weights_bytes > TIGHT_SHARE * self.memory_bytes:
            return MemoryFit.TIGHT
        return MemoryFit.FITS

    @property
    def fits_disk(self) -> bool:
        return self.fetch_bytes <= self.free_bytes


def assess_fit(listing: RepoListing, folder: Path, models_dir: Path) -> DownloadFit:
    """How downloading `listing` into `folder` (inside `models_dir`) fits this machine."""
    return DownloadFit(
        weights_bytes=listing.weights_bytes,
        memory_bytes=psutil.virtual_memory().total,
        fetch_bytes=bytes_to_fetch(listing.files, folder),
        free_bytes=free_disk_bytes(models_dir),
    )


def bytes_to_fetch(files: dict[str, int], folder: Path) -> int:
    """The bytes of `files` not yet complete in `folder` (a download only renames a file to its
    final name there once it has all of it)."""
    present = sum((folder / name).stat().st_size for name in files if (folder / name).is_file())
    return max(0, sum(files.values()) - present)


def free_disk_bytes(models_dir: Path) -> int:
    """Free bytes on the disk that holds (or will hold, once created) the models folder."""
    existing = next(p for p in (models_dir, *models_dir.parents) if p.exists())
    return shutil.disk_usage(existing).free
