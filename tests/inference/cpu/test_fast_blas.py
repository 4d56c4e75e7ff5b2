"""The fast BLAS: loaded before MLX in every process that runs a model, so MLX's float32
matrix products use it; when it cannot be loaded, MLX still runs on its bundled BLAS and the
outcome says why."""

from __future__ import annotations

import json
import logging
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

import inference.cpu.fast_blas as fast_blas
from tests.perf import best_of

ROOT = Path(__file__).resolve().parents[3]
LINUX_X86 = sys.platform.startswith("linux") and platform.machine() == "x86_64"
needs_linux_x86 = pytest.mark.skipif(
    not LINUX_X86, reason="the fast BLAS is for Linux x86_64 (MLX uses Accelerate on macOS)"
)
# A float32 product as MLX computes it, timed best of five; prints JSON.
MATMUL = """
import json, time
import inference.cpu.fast_blas as fast_blas
import mlx.core as mx
a = mx.random.normal((768, 768)); b = mx.random.normal((768, 768)); mx.eval(a, b)
best = 1e9
for _ in range(5):
    start = time.perf_counter(); mx.eval(a @ b); best = min(best, time.perf_counter() - start)
print(json.dumps({"seconds": best, "in_use": fast_blas.in_use(),
                  "describe": fast_blas.outcome().describe()}))
"""


def child(code: str, **env: str) -> dict:
    """Run `code` in a fresh interpreter from the checkout; its last line is JSON."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=environ,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@needs_linux_x86
def test_this_process_loaded_it_before_mlx_and_mlx_binds_to_it() -> None:
    result = fast_blas.outcome()
    assert result.loaded, result.reason
    assert result.name.startswith("OpenBLAS 0.3") and result.describe().endswith("before MLX")
    assert fast_blas.in_use()
    maps = Path("/proc/self/maps").read_text()
    assert str(Path(result.path).resolve()) in maps


@needs_linux_x86
def test_the_wheel_s_own_libgfortran_is_the_one_loaded() -> None:
    loaded = {
        line.split()[-1]
        for line in Path("/proc/self/maps").read_text().splitlines()
        if "libgfortran" in line
    }
    assert loaded and all("mlx_cpu.libs" in path for path in loaded), loaded


@needs_linux_x86
def test_openblas_takes_half_the_cpus_unless_told_otherwise() -> None:
    assert f"{fast_blas.threads()} thread" in fast_blas.outcome().name
    assert fast_blas.threads() == max(1, len(os.sched_getaffinity(0)) // 2)
    other = 2 if fast_blas.threads() == 1 else 1  # OpenBLAS caps a count at the cores there
    told = child(MATMUL, OPENBLAS_NUM_THREADS=str(other))
    assert told["in_use"] and f", {other} thread" in told["describe"]


@needs_linux_x86
def test_the_arithmetic_key_names_the_kernels_and_not_the_thread_count() -> None:
    """Saved caches are keyed by it: other kernels round differently, more threads do not."""
    here = fast_blas.arithmetic()
    assert here.startswith("OpenBLAS 0.3") and here.endswith(" kernels") and "thread" not in here
    code = "import json, inference.cpu.fast_blas as f\nprint(json.dumps(f.arithmetic()))"
    assert child(code, OPENBLAS_NUM_THREADS="2") == here
    assert child(code, BRANCHWISE_BLAS="bundled") == fast_blas.BUNDLED


@needs_linux_x86
def test_bundled_blas_on_request_says_why() -> None:
    result = child(MATMUL, BRANCHWISE_BLAS="bundled")
    assert not result["in_use"]
    assert result["describe"] == "MLX's bundled reference BLAS (BRANCHWISE_BLAS=bundled)"


@needs_linux_x86
def test_without_the_package_mlx_still_runs_and_the_reason_is_recorded() -> None:
    hide = (
        "import importlib.util as u; real = u.find_spec\n"
        "u.find_spec = lambda name, *a: None if name == 'ngsolve_openblas' else real(name, *a)\n"
    )
    result = child(hide + MATMUL)
    assert not result["in_use"] and result["seconds"] > 0
    assert "the ngsolve_openblas package is missing" in result["describe"]


@needs_linux_x86
def test_too_late_after_mlx_is_refused_not_half_done() -> None:
    result = child("import mlx.core\n" + MATMUL)
    assert not result["in_use"]
    assert "MLX was imported before the fast BLAS" in result["describe"]


@needs_linux_x86
def test_the_link_folder_is_reused_and_repaired(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fast_blas.platformdirs, "user_cache_dir", lambda *a: str(tmp_path))
    openblas, gfortran = tmp_path / "libopenblasp.so", tmp_path / "libgfortran-x.so.5"
    openblas.write_bytes(b"a")
    gfortran.write_bytes(b"b")
    folder = fast_blas._linked_folder(openblas, gfortran)
    assert (folder / "libopenblas.so.0").read_bytes() == b"a"
    assert (folder / "libgfortran.so.5").read_bytes() == b"b"
    (folder / "libgfortran.so.5").unlink()
    (folder / "libgfortran.so.5").symlink_to(openblas)  # a stale or wrong link
    assert fast_blas._linked_folder(openblas, gfortran) == folder
    assert (folder / "libgfortran.so.5").read_bytes() == b"b"


@needs_linux_x86
@pytest.mark.perf
def test_a_float32_product_is_faster_than_on_the_bundled_blas() -> None:
    def share() -> float:
        """The fast BLAS's time as a share of the bundled one's, measured side by side."""
        bundled = child(MATMUL, BRANCHWISE_BLAS="bundled")
        fast = child(MATMUL)
        assert fast["in_use"] and not bundled["in_use"]
        return fast["seconds"] / bundled["seconds"]

    assert best_of(share, limit=0.5) < 0.5  # at least twice as fast


@needs_linux_x86
def test_the_log_says_once_which_blas_and_warns_when_it_is_the_slow_one(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    log = logging.getLogger("branchwise.test-blas")
    monkeypatch.setattr(fast_blas, "_reported", False)
    with caplog.at_level(logging.INFO, logger=log.name):
        fast_blas.report_once(log)
        fast_blas.report_once(log)
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.INFO, f"BLAS: {fast_blas.outcome().describe()}")
    ]
    caplog.clear()
    missing = fast_blas.BlasOutcome(False, fast_blas.BUNDLED, reason="the package is missing")
    monkeypatch.setattr(fast_blas, "_outcome", missing)
    monkeypatch.setattr(fast_blas, "_reported", False)
    with caplog.at_level(logging.INFO, logger=log.name):
        fast_blas.report_once(log)
    assert caplog.records[0].levelno == logging.WARNING
    assert "bundled reference BLAS (the package is missing)" in caplog.text
    assert "slower" in caplog.text


def test_a_frozen_bundle_s_own_copy_comes_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    carried = tmp_path / fast_blas.BUNDLE_FOLDER
    carried.mkdir()
    (carried / "libopenblasp-r0.3.33.so").write_bytes(b"x")
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    folders = [*fast_blas._bundle_folders(), *fast_blas._package_folders()]
    assert fast_blas._find(fast_blas.OPENBLAS_GLOB, folders) == carried / "libopenblasp-r0.3.33.so"


@needs_linux_x86
def test_a_module_run_through_run_module_gets_the_fast_blas(tmp_path: Path) -> None:
    """How the tests start `mlx_lm.server`: any module's `__main__`, preloaded first."""
    (tmp_path / "probe.py").write_text(
        "import sys, mlx.core\nimport inference.cpu.fast_blas as fast_blas\n"
        "if __name__ == '__main__':\n    print(fast_blas.in_use(), sys.argv[1:])\n"
    )
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    done = subprocess.run(
        [sys.executable, "-m", "inference.cpu.run_module", "probe", "--port", "1"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=environ,
        check=True,
    )
    assert done.stdout.strip() == "True ['--port', '1']"
