"""Help › About: what Branchwise is, which version this is, and how the loaded model runs
(the weights' form, the BLAS MLX uses and how its matrices lie, from the worker's model info)."""

from __future__ import annotations

import html
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMessageBox, QWidget

if TYPE_CHECKING:
    from app.generation.worker_events import ModelLoaded


def app_version() -> str:
    """The installed version, or a plain word where the package metadata is missing (a source
    checkout run without installing)."""
    try:
        return version("branchwise")
    except PackageNotFoundError:
        return "development build"


def runtime_lines(model_info: ModelLoaded | None) -> list[str]:
    """How the loaded model runs: its weights' form and memory, the BLAS MLX uses and the
    layout of its float32 matrices (measured or forced)."""
    if model_info is None:
        return ["No model is loaded."]
    lines = []
    if form := model_info.weights_form:
        lines.append(f"Weights: {form}, {model_info.weights_bytes / 1e6:,.0f} MB")
    if blas := model_info.blas:
        lines.append(f"BLAS: {blas}")
    if layout := model_info.matrix_layout:
        lines.append(f"Float32 matrices: {layout}")
    return lines


def show_about(parent: QWidget, model_info: ModelLoaded | None = None) -> None:
    details = "<br>".join(html.escape(line) for line in runtime_lines(model_info))
    QMessageBox.about(
        parent,
        "About Branchwise",
        f"<b>Branchwise</b> {html.escape(app_version())}<br>Chat with language models on this "
        "computer. Every conversation is a tree: edits and regenerations keep every version, "
        f"and switching between them is instant.<br><br>{details}",
    )
