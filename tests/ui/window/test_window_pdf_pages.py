"""Scanned PDFs in the window, as a person attaches them: dropped on the window or chosen with
the paperclip, a PDF with no text layer brings up the offer of its pages as images (the page
count, tokens a page, a first and last page, the cost of the range); accepting it brings one
image chip per page, arriving one by one while the window keeps answering; a range over the
limit waits with the reason; a text-only model says it cannot read scanned pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QTimer, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QFileDialog

from tests.pictures import scanned_pdf
from tests.ui.image_pictures import IMAGE_TOKENS, SeeingEngine
from tests.ui.window_harness import OFFSCREEN_NOISE, running_app, scripted_worker
from ui.dialogs.pdf_pages_offer import PdfPagesOffer

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


def _offer(qtbot, window) -> PdfPagesOffer:
    qtbot.waitUntil(
        lambda: any(d.isVisible() for d in window.findChildren(PdfPagesOffer)), timeout=20000
    )
    return next(d for d in window.findChildren(PdfPagesOffer) if d.isVisible())


def _drop(window, path: Path) -> None:
    dropped = QMimeData()
    dropped.setUrls([QUrl.fromLocalFile(str(path))])
    window.dropEvent(
        QDropEvent(
            QPointF(20, 20),
            Qt.DropAction.CopyAction,
            dropped,
            Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.NoModifier,
        )
    )


def test_a_dropped_scan_is_offered_as_pages_and_the_chosen_ones_become_chips(
    qtbot, tmp_path: Path
) -> None:
    scan = scanned_pdf(tmp_path / "Lease 2019.pdf", 12)
    worker = scripted_worker(SeeingEngine([]), model_id="SmolVLM", vision=True)
    with running_app(qtbot, tmp_path / "data", tmp_path / "SmolVLM", worker) as app:
        window, composer = app.window, app.window.composer
        _drop(window, scan)
        offer = _offer(qtbot, window)
        assert offer.windowTitle() == "Attach Pages as Images"
        texts = [label.text() for label in offer.findChildren(type(offer.total))]
        assert texts[0].startswith("Lease 2019.pdf has no text layer: it is a scanned document")
        assert f"12 pages · ≈ {IMAGE_TOKENS} tokens a page" in texts
        assert (offer.first(), offer.last()) == (1, 12)
        assert offer.total.text() == f"12 pages as 12 images, ≈ {12 * IMAGE_TOKENS:,} tokens in all"
        offer.first_page.setValue(3)
        offer.last_page.setValue(5)
        assert offer.total.text() == f"3 pages as 3 images, ≈ {3 * IMAGE_TOKENS:,} tokens in all"
        offer.last_page.setValue(2)
        assert not offer.attach_button.isEnabled()
        assert offer.total.text() == "The last page comes before the first."
        offer.last_page.setValue(5)
        qtbot.mouseClick(offer.attach_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(composer.attached.images.chips) == 3, timeout=20000)
        chips = composer.attached.images.chips
        assert [c.image.name for c in chips] == [f"Lease 2019 page {n}.png" for n in (3, 4, 5)]
        assert all(c.note_label.text() == f"≈ {IMAGE_TOKENS} tokens" for c in chips)
        assert [r["kind"] for r in composer.attached.records()] == ["image"] * 3  # no text file


def test_fifty_pages_arrive_one_by_one_and_a_longer_range_waits(
    qtbot, tmp_path: Path, monkeypatch
) -> None:
    scan = scanned_pdf(tmp_path / "Manual.pdf", 60, size=(595, 842))  # A4 at 72 dpi
    worker = scripted_worker(SeeingEngine([]), model_id="SmolVLM", vision=True)
    with running_app(qtbot, tmp_path / "data", tmp_path / "SmolVLM", worker) as app:
        window, composer = app.window, app.window.composer
        monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *_a, **_k: ([str(scan)], ""))
        qtbot.mouseClick(composer.attach_button, Qt.MouseButton.LeftButton)
        offer = _offer(qtbot, window)
        assert (offer.first(), offer.last()) == (1, 50), "all, up to the limit"
        offer.last_page.setValue(60)
        assert not offer.attach_button.isEnabled()
        assert offer.total.text() == "At most 50 pages can be attached at once; this is 60."
        offer.last_page.setValue(50)
        seen: list[int] = []  # the chips on screen at each tick of the window's own timer
        ticks = QTimer(window)
        ticks.timeout.connect(lambda: seen.append(len(composer.attached.images.chips)))
        ticks.start(10)
        offer.accept()
        qtbot.waitUntil(lambda: len(composer.attached.images.chips) == 50, timeout=120000)
        ticks.stop()
        # The window ran its event loop while the pages were rendered: it saw them arrive.
        assert len({n for n in seen if 0 < n < 50}) > 5, sorted(set(seen))
        assert composer.attached.images.chips[-1].image.name == "Manual page 50.png"


def test_a_text_only_model_says_it_cannot_read_a_scan(qtbot, tmp_path: Path) -> None:
    worker = scripted_worker(SeeingEngine([]), model_id="SmolLM2", vision=False)
    with running_app(qtbot, tmp_path / "data", tmp_path / "SmolLM2", worker) as app:
        window = app.window
        with qtbot.waitSignal(app.controller.notice, timeout=20000) as told:
            window.composer_extras.attach([str(scanned_pdf(tmp_path / "scan.pdf", 2))])
        assert "SmolLM2 can't see images, so it cannot read scanned pages" in told.args[0]
        assert window.banner.isVisible() and not window.findChildren(PdfPagesOffer)
        assert window.composer.attached.images.chips == []
