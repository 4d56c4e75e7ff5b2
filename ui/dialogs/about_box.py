"""Help › About: what Branchwise is, which version this is, and how the loaded model runs
(the weights' form and the BLAS MLX uses, from the worker's model info)."""

from __future__ import annotations

import html
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from PySide6.QtWidgets import QMessageBox, QWidget


def app_version() -> str:
    """The installed version, or a plain word where the package metadata is missing (a source
    checkout run without installing)."""
    try:
        return version("branchwise")
    except PackageNotFoundError:
        return "development build"


def runtime_lines(model_info: dict[str, Any] | None) -> list[str]:
    """How the loaded model runs: its weights' form and memory, and the BLAS MLX uses."""
    if not model_info:
        return ["No model is loaded."]
    lines = []
    if form := model_info.get("weights_form"):
        size = int(model_info.get("weights_bytes") or 0) / 1e6
        lines.append(f"Weights: {form}, {size:,.0f} MB")
    if blas := model_info.get("blas"):
        lines.append(f"BLAS: {blas}")
    return lines


def show_about(parent: QWidget, model_info: dict[str, Any] | None = None) -> None:
    details = "<br>".join(html.escape(line) for line in runtime_lines(model_info))
    QMessageBox.about(
        parent,
        "About Branchwise",
        f"<b>Branchwise</b> {html.escape(app_version())}<br>Chat with language models on this "
        "computer. Every conversation is a tree: edits and regenerations keep every version, "
        f"and switching between them is instant.<br><br>{details}",
    )
