"""On the CPU the preference "On the CPU, trade memory for speed" decides how the next model
loads, and the status bar and About say which form runs, which BLAS MLX uses and how the float32
matrices lie (measured at the load and remembered in the data folder, or forced)."""

from __future__ import annotations

from pathlib import Path

import pytest

import inference.cpu.layout_choice as layout_choice
from app.library.cpu_weights import cpu_backend
from app.paths import AppPaths
from app.settings import Preferences
from tests.ui.window_harness import running_app
from ui.dialogs.about_box import runtime_lines

pytestmark = pytest.mark.skipif(not cpu_backend(), reason="MLX computes on a GPU here")


def test_the_preference_decides_the_form_and_the_window_shows_it(
    qtbot, tmp_path: Path, quantized_models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tiny model's matrices are measured as a real model's are, on timings given here.
    monkeypatch.setattr(layout_choice, "_chosen", {})
    monkeypatch.setattr(layout_choice, "MIN_MEASURED_BYTES", 0)
    monkeypatch.setattr(layout_choice, "measure", lambda matrices: (9.0, 6.0))
    monkeypatch.delenv(layout_choice.ENV, raising=False)
    model = quantized_models_dir / "llama"
    Preferences(AppPaths.resolve(tmp_path).settings_file).cpu_float32 = "never"
    with running_app(qtbot, tmp_path, model) as app:
        window = app.window
        qtbot.waitUntil(lambda: "(4-bit)" in window.status_panel.memory_label.text())
        assert "Weights: 4-bit" in window.status_panel.model_label.toolTip()
        about = runtime_lines(app.controller.model_info)
        assert about[0].startswith("Weights: 4-bit, ")
        assert about[1].startswith("BLAS: OpenBLAS 0.3")
        assert len(about) == 2  # 4-bit weights: no float32 matrix to lay out
        assert app.controller.model_info.cpu_float32 == "never"  # a draft model follows it

        dialog = window.open_preferences()
        assert dialog.cpu_float32_policy() == "never"
        dialog.cpu_float32.setCurrentIndex(dialog.cpu_float32.findData("always"))
        dialog.accept()
        assert app.controller.preferences.cpu_float32 == "always"
        app.controller.load_model(model)  # the next load runs the new choice
        label = window.status_panel.memory_label
        qtbot.waitUntil(lambda: "(float32 (from 4-bit))" in label.text(), timeout=60000)
        about = runtime_lines(app.controller.model_info)
        assert about[0].startswith("Weights: float32 (from 4-bit), ")
        assert about[2] == (
            "Float32 matrices: transposed for BLAS (measured at this load on this CPU: a decode "
            "step's products took 9.0 ms as stored, 6.0 ms transposed)"
        )
        assert "Matrices: transposed for BLAS" in window.status_panel.model_label.toolTip()
        assert (tmp_path / "caches" / "cpu-layout.json").is_file()  # remembered for next time
        assert app.controller.model_info.cpu_float32 == "always"

        monkeypatch.setenv(layout_choice.ENV, "stored")
        app.controller.load_model(model)
        qtbot.waitUntil(
            lambda: "forced" in getattr(app.controller.model_info, "matrix_layout", ""),
            timeout=60000,
        )
        assert runtime_lines(app.controller.model_info)[2] == (
            "Float32 matrices: as stored (forced by BRANCHWISE_CPU_LAYOUT=stored)"
        )
