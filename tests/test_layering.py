"""DESIGN.md section 1: arrows point one way, ui -> app -> inference -> mlx."""

from __future__ import annotations

import subprocess
import sys


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


def test_ui_loads_no_mlx() -> None:
    tops = _tops(_loaded_modules_after_import("ui"))
    assert "ui" in tops
    assert not tops & {"mlx", "mlx_lm", "inference"}
