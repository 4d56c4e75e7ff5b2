"""Screenshots of images in chats, light and dark, saved into tests/screenshots/ for a person to
look at: image chips in the composer, a sent message with its thumbnails and in its editor, the
full-size view, and a text-only model refusing a draft with an image."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.image_pictures import SeeingEngine, drawn_png, thumbnails_shown
from tests.ui.screenshots.test_screenshots import _save
from tests.ui.window_harness import OFFSCREEN_NOISE, running_app, scripted_worker

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

ANSWER = (
    "Both charts show the same rise: sales climb from March, dip in May and reach their "
    "highest in **August**. The second one is the regional breakdown of the first."
)


def _pictures(folder: Path) -> tuple[Path, Path]:
    chart = folder / "sales-2026.png"
    chart.write_bytes(drawn_png(1600, 1000, hue=210, title="Sales 2026"))
    regions = folder / "regions.png"
    regions.write_bytes(drawn_png(900, 1200, hue=30, title="Regions"))
    return chart, regions


def _both_themes(window, name: str) -> None:
    for theme in ("light", "dark"):
        window.set_theme(theme)
        _save(window, f"{name}-{theme}")
    window.set_theme("light")


def test_screenshots_of_images_in_a_chat(qtbot, tmp_path: Path) -> None:
    chart, regions = _pictures(tmp_path)
    engine = SeeingEngine([ANSWER], step_s=0.002)
    worker = scripted_worker(engine, model_id="SmolVLM-256M-Instruct", vision=True)
    with running_app(qtbot, tmp_path / "data", tmp_path / "model", worker) as app:
        window, composer = app.window, app.window.composer
        window.resize(1100, 760)
        composer.attachRequested.emit([str(chart), str(regions)])
        qtbot.waitUntil(lambda: len(composer.attached.images.chips) == 2)
        qtbot.waitUntil(lambda: thumbnails_shown(composer.attached.images))
        qtbot.keyClicks(composer.edit, "What do these charts show?")
        qtbot.waitUntil(composer.token_label.isVisible)
        qtbot.wait(100)  # the window lays the taller composer out
        _both_themes(window, "images-in-composer")

        chip = composer.attached.images.chips[0]
        chip.openRequested.emit()
        viewer = composer.attached.images.viewer
        viewer.resize(780, 560)  # the offscreen screen is 800 px wide: the viewer fits it
        qtbot.waitUntil(lambda: viewer.shown_scale < 1)
        for theme in ("light", "dark"):
            window.set_theme(theme)
            _save(viewer, f"image-viewer-{theme}")
        window.set_theme("light")
        viewer.close()

        with qtbot.waitSignal(
            app.controller.busyChanged, timeout=20000, check_params_cb=lambda busy: not busy
        ):
            composer.send()
        qtbot.wait(100)
        _both_themes(window, "images-in-message")

        user = app.store.active_path(window.current_conversation_id)[0]
        widget = window.chat_view.message_widget(str(user.id))
        widget.start_editing()
        qtbot.wait(100)
        _both_themes(window, "images-in-editor")


def test_screenshots_of_a_text_only_model_refusing_an_image(qtbot, tmp_path: Path) -> None:
    chart, _ = _pictures(tmp_path)
    worker = scripted_worker(SeeingEngine([]), model_id="SmolLM2-135M-Instruct", vision=False)
    with running_app(qtbot, tmp_path / "data", tmp_path / "model", worker) as app:
        window, composer = app.window, app.window.composer
        window.resize(1100, 760)
        composer.attachRequested.emit([str(chart)])
        qtbot.waitUntil(lambda: len(composer.attached.images.chips) == 1)
        qtbot.waitUntil(lambda: thumbnails_shown(composer.attached.images))
        qtbot.keyClicks(composer.edit, "What does this chart show?")
        qtbot.waitUntil(composer.notice.isVisible)
        qtbot.wait(100)
        _both_themes(window, "images-text-only-refusal")
