"""DESIGN.md section 1: arrows point one way, ui -> app -> inference -> mlx."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _loaded_modules_after_import(package: str) -> set[str]:
    # Import every module of the package, so a lazy import hidden in a submodule counts too.
    code = (
        f"import importlib, pkgutil, sys, {package}\n"
        f"for m in pkgutil.walk_packages({package}.__path__, '{package}.'):\n"
        f"    importlib.import_module(m.name)\n"
        "print('\\n'.join(sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return set(out.split())


def _tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_inference_loads_no_qt() -> None:
    tops = _tops(_loaded_modules_after_import("inference"))
    assert "mlx" in tops or "inference" in tops
    assert not tops & {"PySide6", "qasync", "shiboken6", "ui", "app"}


# The model library in app/ reads what a model folder holds from inference.model_files (file
# names, context-length keys; no MLX, and the package imports its heavy modules lazily), so the
# ui loads that much of inference through app: nothing more, and no MLX.
MLX_FREE_INFERENCE = {"inference", "inference.model_files"}


def test_ui_loads_no_mlx() -> None:
    modules = _loaded_modules_after_import("ui")
    assert "ui" in _tops(modules)
    assert not _tops(modules) & {"mlx", "mlx_lm"}
    assert {m for m in modules if m.split(".")[0] == "inference"} <= MLX_FREE_INFERENCE


def test_the_model_file_names_load_no_mlx() -> None:
    code = "import sys, inference.model_files\nprint('\\n'.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "inference.model_files" in out.split()
    assert not _tops(set(out.split())) & {"mlx", "mlx_lm", "PySide6"}


def test_ui_never_imports_inference_or_mlx_itself() -> None:
    imported = set()
    for path in (ROOT / "ui").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
    assert "app" in imported
    assert not imported & {"inference", "mlx", "mlx_lm"}
