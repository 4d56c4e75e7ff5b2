"""A fast BLAS for MLX's CPU backend on Linux: OpenBLAS, loaded before MLX.

The Linux `mlx-cpu` wheel links the reference BLAS it bundles, so every float32 matrix product
(`cblas_sgemm`) runs 15-20x slower than it could. A library loaded with RTLD_GLOBAL before
`libmlx` comes first in the global symbol scope, so MLX binds its `cblas_sgemm` to it instead:
no environment variable, no re-exec, but it must happen before `mlx` is first imported in the
process (`inference/__init__` calls `preload()`; so do the tests, the bench and every child).

The OpenBLAS is the `ngsolve-openblas` wheel's (DYNAMIC_ARCH, unprefixed symbols; the portable
`scipy-openblas32` prefixes its symbols with `scipy_`, so it cannot stand in). It needs
`libgfortran.so.5`, which a fresh machine may lack; the `mlx-cpu` wheel carries one under a
private name. Both are linked into a private folder as `libopenblas.so.0` and
`libgfortran.so.5`: OpenBLAS's RPATH (`$ORIGIN`) finds the latter there before any system copy.
A PyInstaller bundle carries both files in `fast_blas/`.

OpenBLAS gets half the CPUs this process may use (one on a two-core machine) unless
OPENBLAS_NUM_THREADS or OMP_NUM_THREADS says otherwise: its worker threads wait for each other
at every product, so when the cores are busy (MLX's own thread, the window, other programs) a
thread per core made prompts 16x and replies 4x slower here than one thread did.

`BRANCHWISE_BLAS=bundled` keeps MLX's bundled BLAS (the bench measures today's speed so).
Never on macOS, where MLX uses Accelerate and Metal. `preload()` never raises: the outcome,
loaded or why not, is recorded for the log and *About*.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import logging
import os
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import platformdirs

ENV = "BRANCHWISE_BLAS"  # "bundled": do not load the fast BLAS
BUNDLE_FOLDER = "fast_blas"  # the frozen app's folder (packaging/branchwise.spec)
OPENBLAS_PACKAGE = "ngsolve_openblas"
OPENBLAS_GLOB = "libopenblas*.so*"
GFORTRAN_GLOB = "libgfortran*.so*"
BUNDLED = "MLX's bundled reference BLAS"


@dataclass(frozen=True)
class BlasOutcome:
    """What `preload()` did: `loaded` with the library's `name` and `path`, or `reason` why not."""

    loaded: bool
    name: str
    path: str = ""
    reason: str = ""

    def describe(self) -> str:
        """One line for the log and *About*."""
        if self.loaded:
            return f"{self.name}, loaded before MLX"
        return f"{BUNDLED} ({self.reason})"


_outcome: BlasOutcome | None = None
_library: ctypes.CDLL | None = None
_reported = False


def preload() -> BlasOutcome:
    """Load the fast BLAS once per process, before MLX; later calls return the first outcome."""
    global _outcome
    if _outcome is None:
        try:
            _outcome = _preload()
        except Exception as error:  # a failed preload must never stop the app
            _outcome = BlasOutcome(False, BUNDLED, reason=f"loading failed: {error}")
    return _outcome


def outcome() -> BlasOutcome:
    """The recorded outcome (`preload()` runs first if nothing has called it yet)."""
    return preload()


def in_use() -> bool:
    """Whether the process's `cblas_sgemm` (the one MLX binds) is the fast BLAS's."""
    if _library is None:
        return False
    try:
        first = ctypes.cast(ctypes.CDLL(None).cblas_sgemm, ctypes.c_void_p).value
        ours = ctypes.cast(_library.cblas_sgemm, ctypes.c_void_p).value
    except (AttributeError, OSError):
        return False
    return first is not None and first == ours


def report_once(log: logging.Logger) -> None:
    """Say once per process which BLAS MLX uses: a warning when the fast one is missing on
    Linux, where matrix products are then many times slower."""
    global _reported
    if _reported:
        return
    _reported = True
    result = outcome()
    if result.loaded or not sys.platform.startswith("linux") or _disabled():
        log.info("BLAS: %s", result.describe())
    else:
        log.warning("BLAS: %s; replies and prompts are slower on the CPU.", result.describe())


def _disabled() -> bool:
    return os.environ.get(ENV, "").strip().lower() == "bundled"


def _preload() -> BlasOutcome:
    if not sys.platform.startswith("linux"):
        return BlasOutcome(False, BUNDLED, reason="MLX uses Accelerate on this system")
    if _disabled():
        return BlasOutcome(False, BUNDLED, reason=f"{ENV}=bundled")
    if "mlx.core" in sys.modules:
        return BlasOutcome(False, BUNDLED, reason="MLX was imported before the fast BLAS")
    openblas = _find(OPENBLAS_GLOB, [*_bundle_folders(), *_package_folders()])
    if openblas is None:
        return BlasOutcome(False, BUNDLED, reason=f"the {OPENBLAS_PACKAGE} package is missing")
    gfortran = _find(GFORTRAN_GLOB, [*_bundle_folders(), *_mlx_libs_folders()])
    if gfortran is None:
        return BlasOutcome(False, BUNDLED, reason="no libgfortran beside MLX for OpenBLAS")
    folder = _linked_folder(openblas, gfortran)
    # Loaded by its own path first, so its private libquadmath resolves beside it; the loader
    # then reuses this same file for OpenBLAS's `libgfortran.so.5` (one copy in the process).
    ctypes.CDLL(str(gfortran))
    global _library
    _library = ctypes.CDLL(str(folder / "libopenblas.so.0"), mode=ctypes.RTLD_GLOBAL)
    if not any(os.environ.get(name) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")):
        _library.openblas_set_num_threads(threads())
    return BlasOutcome(True, _name(_library), path=str(openblas))


def threads() -> int:
    """OpenBLAS's threads: half the CPUs this process may run on, at least one."""
    return max(1, len(os.sched_getaffinity(0)) // 2)


def thread_count() -> int | None:
    """The threads the fast BLAS computes a product with (None with the bundled BLAS)."""
    if _library is None or not outcome().loaded:
        return None
    try:
        return int(_library.openblas_get_num_threads())
    except AttributeError:
        return None


def arithmetic() -> str:
    """What computes MLX's float32 products, without the thread count (which changes no
    result): "OpenBLAS 0.3.33, Cooperlake kernels", or the bundled BLAS. Other kernels round
    differently, so saved caches are keyed by it (`inference.cache.key`)."""
    if _library is None or not outcome().loaded:
        return BUNDLED
    return _kernels(_library)


def _name(library: ctypes.CDLL) -> str:
    """ "OpenBLAS 0.3.33 (Haswell kernels, 1 thread)", from the library itself."""
    try:
        count = int(library.openblas_get_num_threads())
    except AttributeError:
        return "OpenBLAS"
    version, _, core = _kernels(library).partition(", ")
    return f"{version} ({core or 'unknown kernels'}, {count} thread{'s' * (count != 1)})"


def _kernels(library: ctypes.CDLL) -> str:
    """ "OpenBLAS 0.3.33, Haswell kernels", from the library itself."""
    try:
        library.openblas_get_config.restype = ctypes.c_char_p
        library.openblas_get_corename.restype = ctypes.c_char_p
        words = library.openblas_get_config().decode().split()
        core = library.openblas_get_corename().decode()
    except (AttributeError, UnicodeDecodeError):
        return "OpenBLAS"
    return f"{' '.join(words[:2])}, {core} kernels"


def _find(pattern: str, folders: list[Path]) -> Path | None:
    for folder in folders:
        found = sorted(p for p in folder.glob(pattern) if p.is_file())
        if found:
            return found[0]
    return None


def _bundle_folders() -> list[Path]:
    bundle = getattr(sys, "_MEIPASS", None)
    return [Path(bundle) / BUNDLE_FOLDER] if bundle else []


def _package_folders() -> list[Path]:
    """Where the OpenBLAS package is installed, found without importing it (its __init__ loads
    the library by itself and prints to stderr when that fails)."""
    spec = importlib.util.find_spec(OPENBLAS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(p) for p in spec.submodule_search_locations]


def _mlx_libs_folders() -> list[Path]:
    """The `mlx-cpu` wheel's own libraries (auditwheel's `mlx_cpu.libs`)."""
    try:
        return [Path(str(metadata.distribution("mlx-cpu").locate_file("mlx_cpu.libs")))]
    except metadata.PackageNotFoundError:
        return []


def _linked_folder(openblas: Path, gfortran: Path) -> Path:
    """A private folder where `libopenblas.so.0` and `libgfortran.so.5` link to the two files.
    In the user's cache (kept, one per pair of files), else a fresh temporary folder: never a
    shared, predictable one another user could fill."""
    links = {"libopenblas.so.0": openblas.resolve(), "libgfortran.so.5": gfortran.resolve()}
    tag = hashlib.blake2b(repr(sorted(links.items())).encode(), digest_size=8).hexdigest()
    try:
        folder = Path(platformdirs.user_cache_dir("Branchwise", False)) / "fast-blas" / tag
        _link(folder, links)
    except OSError:
        folder = Path(tempfile.mkdtemp(prefix="branchwise-blas-"))
        _link(folder, links)
    return folder


def _link(folder: Path, links: dict[str, Path]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, target in links.items():
        link = folder / name
        if link.is_symlink() and Path(os.readlink(link)) == target:
            continue
        # Made under a unique name, then renamed over: two processes starting at once agree.
        spare = folder / f".{name}.{os.getpid()}"
        spare.unlink(missing_ok=True)
        spare.symlink_to(target)
        spare.replace(link)
