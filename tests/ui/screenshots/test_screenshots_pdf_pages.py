"""Screenshots of a scanned PDF attached, light and dark, saved into tests/screenshots/ for a
person to look at: the offer of its pages as images over the window (page count, tokens a page,
the range and its cost), and the page chips in the composer once accepted."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageDraw
from PySide6.QtGui import QColor, QImage, QPainter, QPalette

from tests.ui.image_pictures import SeeingEngine, thumbnails_shown
from tests.ui.screenshots.test_screenshots import SHOTS, _assert_real_picture, _save
from tests.ui.window_harness import OFFSCREEN_NOISE, running_app, scripted_worker
from ui.dialogs.pdf_pages_offer import PdfPagesOffer

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


def _scan(path: Path, pages: int) -> Path:
    """A scanner's PDF of typed-looking pages (grey bars for lines of text), no text layer."""
    pictures = []
    for number in range(pages):
        page = Image.new("RGB", (595, 842), (250, 249, 244))
        draw = ImageDraw.Draw(page)
        draw.rectangle((60, 60, 380, 84), fill=(60, 60, 60))  # the heading
        for line in range(30):
            width = 470 - (line * 37 + number * 53) % 160
            draw.rectangle((60, 120 + line * 22, 60 + width, 130 + line * 22), fill=(110, 110, 110))
        pictures.append(page)
    pictures[0].save(path, format="PDF", save_all=True, append_images=pictures[1:])
    return path


def _over_window(window, dialog) -> QImage:
    """The window, dimmed, with the dialog framed over its middle: the offscreen platform
    draws no window frames, so the shot draws what a person's system would."""
    shot = window.grab().toImage()
    painter = QPainter(shot)
    painter.fillRect(shot.rect(), QColor(0, 0, 0, 70))
    left, top = (shot.width() - dialog.width()) // 2, (shot.height() - dialog.height()) // 3
    painter.drawImage(left, top, dialog.grab().toImage())
    painter.setPen(dialog.palette().color(QPalette.ColorRole.Mid))
    painter.drawRect(left - 1, top - 1, dialog.width() + 1, dialog.height() + 1)
    painter.end()
    return shot


def test_screenshots_of_a_scanned_pdf_offered_as_pages(qtbot, tmp_path: Path) -> None:
    scan = _scan(tmp_path / "Lease agreement 2019.pdf", 14)
    worker = scripted_worker(SeeingEngine([]), model_id="Qwen2.5-VL-3B-Instruct", vision=True)
    with running_app(qtbot, tmp_path / "data", tmp_path / "model", worker) as app:
        window, composer = app.window, app.window.composer
        window.resize(1100, 760)
        composer.attachRequested.emit([str(scan)])
        qtbot.waitUntil(lambda: bool(window.findChildren(PdfPagesOffer)), timeout=20000)
        offer = window.findChildren(PdfPagesOffer)[0]
        offer.first_page.setValue(1)
        offer.last_page.setValue(4)
        qtbot.wait(100)
        SHOTS.mkdir(parents=True, exist_ok=True)
        for theme in ("light", "dark"):
            window.set_theme(theme)
            qtbot.wait(50)
            path = SHOTS / f"pdf-pages-offer-{theme}.png"
            assert _over_window(window, offer).save(str(path))
            _assert_real_picture(QImage(str(path)), path.stem)
        window.set_theme("light")
        offer.accept()
        qtbot.waitUntil(lambda: len(composer.attached.images.chips) == 4, timeout=20000)
        qtbot.waitUntil(lambda: thumbnails_shown(composer.attached.images))
        qtbot.keyClicks(composer.edit, "When does the lease end?")
        qtbot.wait(100)
        for theme in ("light", "dark"):
            window.set_theme(theme)
            _save(window, f"pdf-pages-in-composer-{theme}")
        window.set_theme("light")
