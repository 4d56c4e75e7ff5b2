"""Scanned PDFs through the controller and the real worker: a PDF with no text layer is offered
as page images, with what a page costs the loaded model (counted as its chip will be); the pages
chosen come back as image records, one per page in order, kept in the image store; a PDF with
text is read as text as before; a text-only model refuses a scan, saying why."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.chat.controller import ChatController
from app.chat.image_attach import ImageAttached, ScannedPdf
from app.generation.worker import InferenceWorker
from app.images.pdf_pages import render_pages
from app.settings import Preferences
from app.store.conversations import Store
from tests.app.generation.test_attachments import make_pdf
from tests.pictures import scanned_pdf


@pytest.fixture
def make_controller(qtbot, tmp_path: Path) -> Iterator[Callable[[Path], ChatController]]:
    made: list[ChatController] = []

    def make(model: Path) -> ChatController:
        folder = tmp_path / f"data{len(made)}"
        ctl = ChatController(
            Store.open(folder / "chat.sqlite3"),
            InferenceWorker(),
            Preferences(folder / "settings.ini"),
            lambda _: model,
        )
        with qtbot.waitSignal(ctl.worker.modelLoaded, timeout=60000):
            ctl.start()
        made.append(ctl)
        return ctl

    yield make
    for ctl in made:
        ctl.shutdown()


def test_a_scanned_pdf_is_offered_and_its_pages_become_image_records(
    qtbot, make_controller, tmp_path: Path, tiny_vision_dir: Path
) -> None:
    ctl = make_controller(tiny_vision_dir / "qwen2_5_vl")
    cid = ctl.new_conversation()
    scan = scanned_pdf(tmp_path / "Lease 2019.pdf", 3)
    with qtbot.waitSignal(ctl.scannedPdf, timeout=30000) as offered:
        ctl.counts.attach_file(cid, str(scan))
    offer: ScannedPdf = offered.args[0]
    assert (offer.conversation_id, offer.name, offer.pages, offer.most) == (
        cid,
        "Lease 2019.pdf",
        3,
        3,
    )
    with qtbot.waitSignal(ctl.imageReady, timeout=30000) as alone:
        ctl.counts.attach_image(cid, render_pages(scan, 1, 1)[0][1])
    assert offer.page_tokens == alone.args[0].tokens > 0  # the chip's own count

    pages: list[ImageAttached] = []
    ctl.imageReady.connect(pages.append)
    ctl.counts.attach_pdf_pages(cid, offer.path, 2, 3)
    qtbot.waitUntil(lambda: len(pages) == 2, timeout=30000)
    records = [page.record for page in pages]
    assert [r["name"] for r in records] == ["Lease 2019 page 2.png", "Lease 2019 page 3.png"]
    assert all(r["kind"] == "image" and r["format"] == "PNG" for r in records)
    assert [r["tokens"] for r in records] == [offer.page_tokens] * 2  # pages of one size
    assert records[0]["sha256"] != records[1]["sha256"]
    assert all(ctl.store.images.exists(r["sha256"]) for r in records)

    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=60000):
        assert ctl.send(cid, "What do these pages say?", records)
    assert list(ctl.store.active_path(cid)[0].attachments) == records


def test_a_pdf_with_text_is_read_as_text_as_before(
    qtbot, make_controller, tmp_path: Path, tiny_vision_dir: Path
) -> None:
    ctl = make_controller(tiny_vision_dir / "qwen2_5_vl")
    cid = ctl.new_conversation()
    with qtbot.waitSignal(ctl.attachmentReady, timeout=30000) as read:
        ctl.counts.attach_file(cid, str(make_pdf(tmp_path / "typed.pdf", ["Walrus report"])))
    assert "Walrus report" in read.args[0].record["text"]


def test_a_text_only_model_says_it_cannot_read_scanned_pages(
    qtbot, make_controller, tmp_path: Path, llama_path: Path
) -> None:
    ctl = make_controller(llama_path)
    cid = ctl.new_conversation()
    offers: list[ScannedPdf] = []
    ctl.scannedPdf.connect(offers.append)
    with qtbot.waitSignal(ctl.notice, timeout=30000) as told:
        ctl.counts.attach_file(cid, str(scanned_pdf(tmp_path / "scan.pdf", 2)))
    assert told.args[0] == (
        "scan.pdf has no text layer: it is a scanned document, whose pages are images. "
        "llama can't see images, so it cannot read scanned pages. Load a vision model to "
        "attach its pages as images."
    )
    assert offers == []
