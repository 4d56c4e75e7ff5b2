"""On the CPU the preference "On the CPU, trade memory for speed" decides how the next model
loads, and the status bar and About say which form runs and which BLAS MLX uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.library.cpu_weights import cpu_backend
from app.paths import AppPaths
from app.settings import Preferences
from tests.ui.window_harness import running_app
from ui.dialogs.about_box import runtime_lines

pytestmark = pytest.mark.skipif(not cpu_backend(), reason="MLX computes on a GPU here")


def test_the_preference_decides_the_form_and_the_window_shows_it(
    qtbot, tmp_path: Path, quantized_models_dir: Path
) -> None:
    model = quantized_models_dir / "llama"
    Preferences(AppPaths.resolve(tmp_path).settings_file).cpu_float32 = "never"
    with running_app(qtbot, tmp_path, model) as app:
        window = app.window
        qtbot.waitUntil(lambda: "(4-bit)" in window.status_panel.memory_label.text())
        assert "Weights: 4-bit" in window.status_panel.model_label.toolTip()
        about = runtime_lines(app.controller.model_info)
        assert about[0].startswith("Weights: 4-bit, ")
        assert about[1].startswith("BLAS: OpenBLAS 0.3")
        assert app.controller.model_info.cpu_float32 == "never"  # a draft model follows it

        dialog = window.open_preferences()
        assert dialog.cpu_float32_policy() == "never"
        dialog.cpu_float32.setCurrentIndex(dialog.cpu_float32.findData("always"))
        dialog.accept()
        assert app.controller.preferences.cpu_float32 == "always"
        app.controller.load_model(model)  # the next load runs the new choice
        label = window.status_panel.memory_label
        qtbot.waitUntil(lambda: "(float32 (from 4-bit))" in label.text(), timeout=60000)
        assert runtime_lines(app.controller.model_info)[0].startswith(
            "Weights: float32 (from 4-bit), "
        )
        assert app.controller.model_info.cpu_float32 == "always"
