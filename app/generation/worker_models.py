"""The models the inference worker holds: the main model, which every request that names no
model runs on, and, for a compare, models held beside it while they fit in memory together.

A model is held once, by its folder, with its own engine and so its own branch caches (memory
and saved files are keyed by the model: `inference.cache.key`), so going back to a model's
branch reuses that model's prefix and never another's. Models beside the main one are only ever
loaded for a compare whose models the memory room holds together (`fits`); any other load of a
model not held unloads them all, as a model switch always has, so memory is never kept for a
model the person did not ask to run side by side.

The room is injectable (`ModelRoom`) so tests can set it: it says how many bytes model weights
may take in all, given what the held models already take (unloading those frees them). The
stored caches' memory budget is shared: each held engine gets an equal part of it.

Mutated on the worker thread only; `snapshot` may be read from any thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil

if TYPE_CHECKING:
    from collections.abc import Sequence

    from app.generation.worker_engine import EngineLike
    from app.generation.worker_events import ModelLoaded
    from app.library.entries import ModelInfo

# Bytes of model weights already held -> bytes model weights may take in all.
ModelRoom = Callable[[int], int]


def available_room(held_bytes: int) -> int:
    """The memory available now, plus what unloading the held models would give back."""
    return int(psutil.virtual_memory().available) + held_bytes


@dataclass(frozen=True)
class HeldModel:
    """A model the worker holds, as the GUI thread may read it."""

    model_id: str
    path: Path
    weights_bytes: int
    main: bool


@dataclass
class Resident:
    """A loaded model: its folder, its engine and the info its load reported."""

    path: Path
    engine: EngineLike
    info: ModelLoaded

    @property
    def model_id(self) -> str:
        return self.info.model_id or self.path.name

    @property
    def weights_bytes(self) -> int:
        return self.info.weights_bytes

    @property
    def tool_format(self) -> str | None:
        return self.info.tool_format

    @property
    def identity(self) -> dict[str, Any] | None:
        """What names the model in a reply's provenance (inference.loading.identity)."""
        return self.info.identity


def same_folder(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve()


def load_refusal(info: ModelInfo, held: Sequence[HeldModel], cpu_float32: str) -> str | None:
    """Why loading the library model `info` as the main one would not fit in memory now, or
    None: a model held already needs no more memory, and any other is loaded in place of every
    model held, so what they take counts as free."""
    if any(same_folder(h.path, info.path) for h in held):
        return None
    from app.library.entries import LibraryError, memory_check  # slow to import: when needed

    try:
        memory_check(info, sum(h.weights_bytes for h in held), cpu_float32)
    except LibraryError as exc:
        return str(exc)
    return None


def save_caches(residents: list[Resident]) -> None:
    """Save every unsaved cache of models about to be let go, so their branches continue from
    them when the person comes back (saving stops by itself on a full disk)."""
    for resident in residents:
        while resident.engine.save_pending(1.0):
            pass


class WorkerModels:
    def __init__(self, room: ModelRoom = available_room) -> None:
        self._room = room
        self.main: Resident | None = None
        self._beside: list[Resident] = []  # least recently used first
        self._cache_budget: int | None = None  # None: each engine keeps its own default
        self._lock = threading.Lock()
        self._snapshot: tuple[HeldModel, ...] = ()

    def all(self) -> list[Resident]:
        """Every held model, the main one first."""
        return [*([self.main] if self.main is not None else []), *self._beside]

    def find(self, path: Path) -> Resident | None:
        return next((r for r in self.all() if same_folder(r.path, path)), None)

    def weights_bytes(self) -> int:
        return sum(r.weights_bytes for r in self.all())

    def room(self, held_bytes: int) -> int:
        """Bytes model weights may take in all while `held_bytes` are held (any thread)."""
        return self._room(held_bytes)

    def fits(self, extra_bytes: int, other_bytes: int = 0) -> bool:
        """Whether a model of `extra_bytes` can be loaded beside those held (and `other_bytes`
        more, a draft model's)."""
        held = self.weights_bytes() + other_bytes
        return held + extra_bytes <= self.room(held)

    def set_main(self, resident: Resident) -> None:
        """A model just loaded as the main one (the others were unloaded before it)."""
        self.main = resident
        self._changed()

    def add_beside(self, resident: Resident) -> None:
        self._beside.append(resident)
        self._changed()

    def used(self, resident: Resident) -> None:
        """`resident` answered a request: the last to be unloaded of those beside."""
        if resident in self._beside:
            self._beside.remove(resident)
            self._beside.append(resident)

    def promote(self, resident: Resident) -> None:
        """A model held beside becomes the main one, caches and all; the main one stays held
        beside it (both fit: they were loaded together)."""
        self._beside.remove(resident)
        if self.main is not None:
            self._beside.append(self.main)
        self.main = resident
        self._changed()

    def release_beside(self, keep: tuple[Path, ...]) -> list[Resident]:
        """Forget the models held beside the main one that are not in `keep` (the caller
        saves their caches and lets them go)."""
        released = [r for r in self._beside if not any(same_folder(r.path, k) for k in keep)]
        if released:
            self._beside = [r for r in self._beside if r not in released]
            self._changed()
        return released

    def release_all(self) -> list[Resident]:
        """Forget every held model (the caller saves their caches and lets them go)."""
        released = self.all()
        self.main, self._beside = None, []
        self._changed()
        return released

    def set_cache_budget(self, total_bytes: int) -> None:
        self._cache_budget = total_bytes
        self._share_budget()

    def snapshot(self) -> tuple[HeldModel, ...]:
        """The held models (any thread)."""
        with self._lock:
            return self._snapshot

    def _changed(self) -> None:
        self._share_budget()
        held = tuple(
            HeldModel(r.model_id, r.path, r.weights_bytes, r is self.main) for r in self.all()
        )
        with self._lock:
            self._snapshot = held

    def _share_budget(self) -> None:
        """Each held engine gets an equal part of the budget, so several models' caches
        together never take more than one budget."""
        held = self.all()
        if self._cache_budget is None or not held:
            return
        for resident in held:
            resident.engine.cache_budget_bytes = self._cache_budget // len(held)
