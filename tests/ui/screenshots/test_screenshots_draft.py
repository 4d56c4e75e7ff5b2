"""Screenshots of a chat's settings with its draft model chosen (light and dark), saved into
tests/screenshots/ for a person to look at; each must be a real picture."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.paths import AppPaths
from tests.tiny_models import build_model
from tests.ui.screenshots.test_screenshots import _save
from tests.ui.window_harness import OFFSCREEN_NOISE, ScriptedEngine, running_app, scripted_worker

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

MAIN = "SmolLM2-360M-Instruct"
DRAFT = "SmolLM2-135M-Instruct"


def test_screenshots_of_the_draft_model_row(qtbot, tmp_path: Path) -> None:
    models = AppPaths.resolve(tmp_path).models_dir
    for name in (MAIN, DRAFT):  # tiny llamas (SmolLM2's architecture) under readable names
        build_model("llama", models / name)
    worker = scripted_worker(ScriptedEngine([]))
    with running_app(qtbot, tmp_path, models / MAIN, worker) as app:
        window = app.window
        cid = window.current_conversation_id
        app.controller.update_settings(
            cid, model_id=MAIN, params={"speculation": "draft", "draft_model": DRAFT}
        )
        for theme in ("light", "dark"):
            window.set_theme(theme)
            dialog = window.open_settings()
            assert dialog.draft_model.currentText() == DRAFT
            dialog.resize(640, dialog.sizeHint().height())
            _save(dialog, f"draft-model-{theme}")
            dialog.reject()
        window.set_theme("light")
