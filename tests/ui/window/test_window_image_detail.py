"""A model's image detail chosen in Preferences (Models › Image detail), with a tiny real
Qwen2.5-VL in the library: the choice is kept for that model, the draft's image chip is counted
again at once ("≈ N tokens" follows it), and a reply then sends the image at that size."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.paths import AppPaths
from tests.tiny_vision import build_vision_model, png_bytes, widen_pixel_budget
from tests.ui.window_harness import OFFSCREEN_NOISE, SHORT, running_app, send_and_wait, set_params
from ui.forms.model_defaults import OWN_DETAIL_TEXT

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


def test_preferences_choose_a_models_image_detail_and_the_chip_recounts(
    qtbot, tmp_path: Path
) -> None:
    model = AppPaths.resolve(tmp_path).models_dir / "qwen-vl"
    widen_pixel_budget(build_vision_model("qwen2_5_vl", model))
    picture = tmp_path / "scan.png"
    picture.write_bytes(png_bytes(1000, 750, 7))
    with running_app(qtbot, tmp_path, model) as app:
        window, composer = app.window, app.window.composer
        set_params(app, SHORT)
        composer.attachRequested.emit([str(picture)])
        qtbot.waitUntil(lambda: len(composer.attached.images.chips) == 1, timeout=30000)
        own = composer.attached.images.chips[0].image.tokens

        preferences = window.open_preferences()
        detail = preferences.model_defaults.detail
        assert preferences.model_defaults.model.currentData() == "qwen-vl"
        assert detail.currentText() == OWN_DETAIL_TEXT
        assert [detail.itemText(i) for i in range(1, detail.count())] == [
            "512 px",
            "768 px",
            "1024 px",
            "1536 px",
            "2048 px",
        ]
        detail.setCurrentIndex(detail.findData(512))
        detail.activated.emit(detail.currentIndex())  # as a person's pick does
        preferences.accept()
        assert app.controller.preferences.image_detail_for("qwen-vl") == 512

        qtbot.waitUntil(
            lambda: 0 < composer.attached.images.chips[0].image.tokens < own, timeout=30000
        )
        chip = composer.attached.images.chips[0]
        assert len(composer.attached.images.chips) == 1  # counted again, not attached twice
        assert chip.note_label.text() == f"≈ {chip.image.tokens} tokens"
        send_and_wait(qtbot, app, "What does it say?")
        reply = app.store.active_path(window.current_conversation_id)[-1]
        assert reply.status == "complete"

        # Back to the model's own: the setting is forgotten for it.
        preferences = window.open_preferences()
        assert preferences.model_defaults.detail.chosen() == 512
        preferences.model_defaults.detail.setCurrentIndex(0)
        preferences.model_defaults.detail.activated.emit(0)
        preferences.accept()
        assert app.controller.preferences.image_detail_for("qwen-vl") is None
