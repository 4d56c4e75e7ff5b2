"""Which way float32 matrices lie on the CPU: chosen by measuring this machine, once.

A linear layer computes `x @ weight.T`. For the one input row of a decode step, how fast BLAS
runs that product depends on how the weight lies in memory, and which way wins depends on the
CPU, not only on the BLAS kernels: on one 2-core AMD Zen 5 VM the transposed layout
(`weight_layout`) decoded SmolLM2 1.2-1.3x faster with OpenBLAS's Haswell and its Cooperlake
kernels alike, while on a 2-core AMD EPYC (Zen 4) VM, with the same Cooperlake kernels, it decoded
about 1.3x slower. No rule holds for every CPU, so when a float32 model is loaded on the CPU
the one-row products of a decode step are timed both ways on the model's own matrix shapes
(bounded to about a quarter of a second), and the faster layout is kept.

The choice is remembered in a JSON file (the app passes its data folder's
`caches/cpu-layout.json`), keyed by what decides it: the CPU, the BLAS with its kernels and
thread count, and the model's matrix shapes. Later loads read it and skip the probe. Within a
process a choice is kept for its key as well, so two loads of one model never disagree (their
numbers, and so their saved caches, would differ: caches are keyed by the layout).

`BRANCHWISE_CPU_LAYOUT=transposed|stored|auto` (default auto) forces either. A caller may force
one too: a replay computes in the layout its reply was computed in.

Models whose matrices take under `MIN_MEASURED_BYTES` in all are not measured: their products
take microseconds either way, so a timing would only pick noise; they stay as stored. No real
language model is that small (SmolLM2-135M holds 538 MB of float32 matrices).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import platform
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import cast

import mlx.core as mx
import mlx.nn as nn

from inference.cpu.fast_blas import arithmetic, thread_count
from inference.cpu.weight_layout import AS_STORED, TRANSPOSED, stored_matrices

ENV = "BRANCHWISE_CPU_LAYOUT"
AUTO = "auto"
MODES = {AUTO: None, "transposed": TRANSPOSED, "stored": AS_STORED}
MIN_MEASURED_BYTES = 64 << 20
# Per matrix shape, the products timed cover at least this much of the model's memory (or all
# of it): about a CPU's last-level cache, so they stream from memory as a decode step does.
SAMPLE_BYTES = 24 << 20
# A larger single matrix (an output layer) is timed whole up to this size: cutting it changes how
# BLAS runs it (SmolLM2's 113 MB output layer took 2.2x as long transposed, a third of it 1.65x).
WHOLE_BYTES = 256 << 20
PROBE_SECONDS = 0.25
MIN_ROUNDS = 2
MAX_ROUNDS = 9
# Transposing costs a copy at load and strided embedding lookups: it must win by this share.
MARGIN = 0.03
_MEMORY_VERSION = 1
_log = logging.getLogger(__name__)


class Basis(Enum):
    """How a layout came to be chosen."""

    MEASURED = "measured"
    REMEMBERED = "remembered"  # measured by an earlier load, on this machine
    FORCED = "forced"
    TOO_SMALL = "too small"
    NOT_APPLICABLE = "not applicable"  # no float32 matrix on the CPU


@dataclass(frozen=True)
class LayoutRequest:
    """What a load asks for: a `mode` (a key of MODES; auto measures unless BRANCHWISE_CPU_LAYOUT
    forces one) and the file where measured choices are remembered (None: this process only)."""

    mode: str = AUTO
    memory: Path | None = None
    forced_by: str = ""  # who forces a non-auto mode, in words ("the replayed reply")

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(
                f"Unknown matrix layout {self.mode!r}; choose one of {', '.join(MODES)}."
            )


@dataclass(frozen=True)
class LayoutChoice:
    """The layout a model's float32 matrices run in, and why. `stored_ms` and `transposed_ms`
    are a decode step's products as the probe estimated them (best of its rounds)."""

    layout: str  # TRANSPOSED or AS_STORED
    basis: Basis
    stored_ms: float | None = None
    transposed_ms: float | None = None
    forced_by: str = ""

    @property
    def transposed(self) -> bool:
        return self.layout == TRANSPOSED

    def describe(self) -> str:
        """One line for *About* and the log; "" where no layout applies."""
        name = "transposed for BLAS" if self.transposed else "as stored"
        match self.basis:
            case Basis.MEASURED | Basis.REMEMBERED:
                when = (
                    "measured at this load" if self.basis is Basis.MEASURED else "measured earlier"
                )
                return (
                    f"{name} ({when} on this CPU: a decode step's products took "
                    f"{self.stored_ms or 0:.1f} ms as stored, {self.transposed_ms or 0:.1f} ms "
                    "transposed)"
                )
            case Basis.FORCED:
                return f"{name} (forced by {self.forced_by})"
            case Basis.TOO_SMALL:
                return f"{name} (the matrices are too small for the layout to matter)"
            case Basis.NOT_APPLICABLE:
                return ""


NOT_APPLICABLE = LayoutChoice(AS_STORED, Basis.NOT_APPLICABLE)
MEASURE_HERE = LayoutRequest()  # auto, remembered by this process only
_chosen: dict[str, LayoutChoice] = {}  # this process's choices, by key


def choose_layout(model: nn.Module, request: LayoutRequest) -> LayoutChoice:
    """The layout for a model's float32 matrices on the CPU (see the module's docstring). The
    model must still hold them as stored; this only decides, `weight_layout` transposes."""
    matrices = stored_matrices(model)
    if not matrices:
        return NOT_APPLICABLE
    forced = _forced(request)
    if forced is not None:
        return forced
    if sum(m.nbytes for m in matrices) < MIN_MEASURED_BYTES:
        return LayoutChoice(AS_STORED, Basis.TOO_SMALL)
    key = probe_key(matrices)
    if key in _chosen:
        return _chosen[key]
    remembered = _recall(request.memory, key)
    if remembered is None:
        start = time.perf_counter()
        stored_ms, transposed_ms = measure(matrices)
        faster = TRANSPOSED if transposed_ms < stored_ms * (1 - MARGIN) else AS_STORED
        chosen = LayoutChoice(faster, Basis.MEASURED, stored_ms, transposed_ms)
        _remember(request.memory, key, chosen)
        _log.info(
            "Matrix layout: %s; the probe took %.2f s",
            chosen.describe(),
            time.perf_counter() - start,
        )
    else:
        chosen = remembered
    _chosen[key] = chosen
    return chosen


def _forced(request: LayoutRequest) -> LayoutChoice | None:
    if request.mode != AUTO:
        return LayoutChoice(
            MODES[request.mode] or AS_STORED,
            Basis.FORCED,
            forced_by=request.forced_by or "the caller",
        )
    value = os.environ.get(ENV, "").strip().lower()
    if not value or value == AUTO:
        return None
    layout = MODES.get(value)
    if layout is None:
        _log.warning(
            "%s=%r is not one of %s; the layout is measured.", ENV, value, ", ".join(MODES)
        )
        return None
    return LayoutChoice(layout, Basis.FORCED, forced_by=f"{ENV}={value}")


def measure(matrices: Sequence[mx.array], seconds: float = PROBE_SECONDS) -> tuple[float, float]:
    """Milliseconds of a decode step's one-row products (`row @ m.T` for every matrix), as stored
    and transposed: per shape, a sample of at least SAMPLE_BYTES (a single larger matrix whole,
    up to WHOLE_BYTES) is timed both ways and scaled to the bytes of that shape in the model;
    sides alternate, each keeps its best round. Returns (stored_ms, transposed_ms)."""
    groups: dict[tuple[int, ...], list[mx.array]] = {}
    for matrix in matrices:
        groups.setdefault(tuple(matrix.shape), []).append(matrix)
    samples = [_sample(group) for group in groups.values()]
    mx.eval([s.arrays for s in samples])  # pyright: ignore[reportUnknownMemberType]  # mlx stub: eval(*args) untyped
    best = [float("inf"), float("inf")]
    deadline = time.perf_counter() + seconds
    rounds = 0
    while rounds < MIN_ROUNDS or (rounds < MAX_ROUNDS and time.perf_counter() < deadline):
        for side in (0, 1) if rounds % 2 == 0 else (1, 0):
            best[side] = min(best[side], sum(s.seconds(transposed=side == 1) for s in samples))
        rounds += 1
    return best[0] * 1000, best[1] * 1000


@dataclass(frozen=True)
class _Sample:
    row: mx.array
    stored: list[mx.array]
    transposed: list[mx.array]
    scale: float  # the shape's bytes in the model over the sample's

    @property
    def arrays(self) -> list[mx.array]:
        return [self.row, *self.stored, *self.transposed]

    def seconds(self, transposed: bool) -> float:
        matrices = self.transposed if transposed else self.stored
        start = time.perf_counter()
        mx.eval([self.row @ m.T for m in matrices])  # pyright: ignore[reportUnknownMemberType]  # mlx stub: eval(*args) untyped
        return (time.perf_counter() - start) * self.scale


def _sample(group: list[mx.array]) -> _Sample:
    columns = group[0].shape[1]
    whole = sum(m.nbytes for m in group)
    taken: list[mx.array] = []
    for matrix in group:
        if sum(m.nbytes for m in taken) >= SAMPLE_BYTES:
            break
        if matrix.nbytes > WHOLE_BYTES:  # a huge output layer: its first rows
            matrix = mx.contiguous(matrix[: max(1, WHOLE_BYTES // (columns * matrix.itemsize))])
        taken.append(matrix)
    share = sum(m.nbytes for m in taken)
    return _Sample(
        row=mx.full((1, columns), 0.5, dtype=mx.float32),
        stored=taken,
        transposed=[mx.contiguous(m.T).T for m in taken],
        scale=whole / share,
    )


def probe_key(matrices: Sequence[mx.array]) -> str:
    """What decides the faster layout, hashed: the CPU, the BLAS with its kernels and thread
    count, and how many matrices of each shape the model multiplies."""
    shapes = Counter(tuple(m.shape) for m in matrices)
    parts = [cpu_identity(), arithmetic(), thread_count(), sorted(shapes.items())]
    return hashlib.blake2b(json.dumps(parts).encode(), digest_size=16).hexdigest()


def cpu_identity() -> str:
    """The CPU in words precise enough to tell kernels apart: on Linux its vendor, family,
    model, name and vector extensions (a VM may show only "AMD EPYC" as the name)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return f"{platform.machine()} {platform.processor()}".strip()
    fields: dict[str, str] = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        name, _, value = line.partition(":")
        fields[name.strip()] = value.strip()
    flags = set(fields.get("flags", "").split())
    vectors = sorted(flags & {"avx", "avx2", "fma", "avx512f", "avx512_bf16", "amx_tile"})
    keys = ("vendor_id", "cpu family", "model", "model name")
    return " / ".join([*(fields.get(k, "?") for k in keys), " ".join(vectors)])


def _recall(memory: Path | None, key: str) -> LayoutChoice | None:
    if memory is None:
        return None
    try:
        entry = json.loads(memory.read_text(encoding="utf-8"))["choices"][key]
        layout = entry["layout"]
        if layout not in (TRANSPOSED, AS_STORED):
            return None
        return LayoutChoice(
            layout, Basis.REMEMBERED, float(entry["stored_ms"]), float(entry["transposed_ms"])
        )
    except (OSError, ValueError, KeyError, TypeError):  # none yet, or damaged: measure again
        return None


def _remember(memory: Path | None, key: str, choice: LayoutChoice) -> None:
    """Add the choice to the memory file, written whole under another name, then renamed over."""
    if memory is None:
        return
    choices: dict[str, object] = {}
    try:
        stored = json.loads(memory.read_text(encoding="utf-8"))["choices"]
        if isinstance(stored, dict):
            choices.update(cast(dict[str, object], stored))
    except (OSError, ValueError, TypeError, KeyError):  # none yet, or damaged: start afresh
        pass
    choices[key] = {
        "layout": choice.layout,
        "stored_ms": round(choice.stored_ms or 0.0, 3),
        "transposed_ms": round(choice.transposed_ms or 0.0, 3),
        "cpu": cpu_identity(),
        "blas": arithmetic(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    spare = memory.with_name(f".{memory.name}.{os.getpid()}")
    try:
        memory.parent.mkdir(parents=True, exist_ok=True)
        spare.write_text(json.dumps({"version": _MEMORY_VERSION, "choices": choices}, indent=1))
        spare.replace(memory)
    except OSError as error:  # a full disk: measured again at the next load
        with contextlib.suppress(OSError):
            spare.unlink(missing_ok=True)
        _log.warning("The measured matrix layout could not be remembered: %s", error)
