"""The scan for models other apps hold, and adding one of them, as operations: the scan reads
files on a plain thread (headers and small files; its one MLX question goes to a child
process), so it never waits behind a reply; adding a GGUF imports it on the inference worker
(MLX), adding a folder links it in place on a plain thread."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject

from app.discovery.adding import add_found
from app.discovery.found import Format, FoundModel
from app.discovery.locations import Location, standard_locations
from app.discovery.scan import scan
from app.library.model_check import LibraryError
from app.operations.models import Addition, Transferred, addition, with_mlx_refusals
from app.operations.operation import EngineQueue, JobContext, Operation, in_thread, on_worker


@dataclass(frozen=True, slots=True)
class ScanProgress:
    """How far a scan is: models found so far, and the folder being read."""

    found: int
    where: str


@dataclass(frozen=True, slots=True)
class ScanResult:
    """What a scan found, and where it looked."""

    models: tuple[FoundModel, ...]
    locations: tuple[Location, ...]


def scan_for_models(
    owner: QObject,
    models_dir: Path,
    locations: Sequence[Location] | None = None,
    check_types: bool = True,
) -> Operation[ScanResult, ScanProgress]:
    """Scan `locations` (LM Studio's, the Hugging Face cache's and Ollama's stores when None),
    each find marked when the library holds it already."""

    def job(context: JobContext[ScanProgress]) -> ScanResult:
        where = tuple(standard_locations() if locations is None else locations)
        found = scan(
            where,
            models_dir,
            progress=lambda count, folder: context.report(ScanProgress(count, folder)),
            stop=lambda: context.cancelled,
            check_types=check_types,
        )
        return ScanResult(tuple(found), where)

    return Operation(
        owner, "Looking for models on this computer", job, expected=(LibraryError, OSError)
    )


def add_found_model(
    owner: QObject, found: FoundModel, models_dir: Path, worker: EngineQueue
) -> Addition:
    """Add a find: a folder linked in place (a plain thread), a GGUF imported (the worker)."""

    def job(progress: Callable[[int, int], None], context: JobContext[Transferred]) -> Path:
        return with_mlx_refusals(
            lambda: add_found(found, models_dir, progress=progress, cancel=context.cancel_event)
        )

    gguf = found.format == Format.GGUF
    verb = "Importing" if gguf else "Adding"
    return addition(owner, f"{verb} {found.name}", job, on_worker(worker) if gguf else in_thread)
