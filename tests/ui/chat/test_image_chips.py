"""Image chips and the viewer on their own: thumbnails made once per file and turned by EXIF
orientation, a file Qt cannot read or one gone from the data folder shown as a chip saying so
(never an error), the viewer scaled to fit with the real size said, Esc closing it."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest
from PIL import Image
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.ui.image_pictures import drawn_png
from ui.chat import image_files
from ui.chat.image_chips import MISSING, ImageChips
from ui.chat.image_files import THUMBNAILS, ThumbnailCache, read_image
from ui.widgets.view_models import ImageView


def _view(path: Path | None, width: int = 64, height: int = 48, tokens: int = 81) -> ImageView:
    size = path.stat().st_size if path else 0
    return ImageView(
        "chart.png", size, width, height, "PNG", tokens, "ab" * 32, str(path) if path else None
    )


def test_a_thumbnail_is_read_once_at_its_small_size_off_the_gui_thread(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    picture = tmp_path / "chart.png"
    picture.write_bytes(drawn_png(1200, 800))
    cache = ThumbnailCache(limit=2)
    threads: list[str] = []
    real_read = image_files.read_image

    def read(path: str, longest_edge: int | None = None) -> image_files.ReadImage:
        threads.append(threading.current_thread().name)
        return real_read(path, longest_edge)

    def fetch(edge: int) -> image_files.ReadImage:
        found = cache.cached(str(picture), edge)
        if found is None:
            with qtbot.waitSignal(cache.ready, check_params_cb=lambda *key: key[1] == edge):
                cache.request(str(picture), edge)
                cache.request(str(picture), edge)  # already on its way: not read twice
            found = cache.cached(str(picture), edge)
        assert found is not None
        return found

    monkeypatch.setattr(image_files, "read_image", read)
    first = fetch(60)
    assert first.image is not None and (first.image.width(), first.image.height()) == (60, 40)
    assert fetch(60) is first and cache.reads == 1
    fetch(30)
    fetch(20)  # past the limit: the least recently used goes
    fetch(60)
    assert cache.reads == 4
    assert threads and all(name.startswith("thumbnails") for name in threads)


def test_exif_orientation_turns_the_picture(qapp: object, tmp_path: Path) -> None:
    out = io.BytesIO()
    exif = Image.Exif()
    exif[0x0112] = 6  # turned a quarter clockwise when shown
    Image.new("RGB", (40, 20), (10, 120, 200)).save(out, "JPEG", exif=exif)
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(out.getvalue())
    whole = read_image(str(photo)).image
    assert whole is not None and (whole.width(), whole.height()) == (20, 40)
    small = read_image(str(photo), 10).image
    assert small is not None and (small.width(), small.height()) == (5, 10)


def test_chips_show_size_tokens_and_open_the_viewer(qtbot: QtBot, tmp_path: Path) -> None:
    picture = tmp_path / "chart.png"
    picture.write_bytes(drawn_png(1600, 1200))
    chips = ImageChips(removable=True)
    qtbot.addWidget(chips)
    chips.set_images([_view(picture, 1600, 1200, 1234)])
    chips.show()
    chip = chips.chips[0]
    assert chip.details_label.text().startswith("1600×1200 · ")
    assert chip.note_label.text() == "≈ 1,234 tokens"
    qtbot.waitUntil(lambda: chip.thumbnail_shown)
    assert chip.thumbnail.pixmap().width() > chip.thumbnail.width() // 2  # not the placeholder
    with qtbot.waitSignal(chips.removeRequested) as removed:
        chip.remove_button.click()
    assert removed.args == [0]

    qtbot.mouseClick(chip, Qt.MouseButton.LeftButton)
    viewer = chips.viewer
    assert viewer is not None and viewer.isVisible()
    viewer.resize(640, 520)
    qtbot.waitUntil(lambda: viewer.shown_scale < 0.5)  # scaled down to fit, never up
    assert "1600×1200 px" in viewer.caption.text() and "shown at" in viewer.caption.text()
    qtbot.keyClick(viewer, Qt.Key.Key_Escape)
    assert not viewer.isVisible()


def test_a_blind_model_an_unreadable_file_and_a_missing_one(qtbot: QtBot, tmp_path: Path) -> None:
    picture = tmp_path / "chart.png"
    picture.write_bytes(drawn_png(64, 48))
    garbage = tmp_path / "garbage.png"
    garbage.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    chips = ImageChips(removable=False, align_right=True)
    qtbot.addWidget(chips)
    chips.set_images([_view(picture), _view(garbage), _view(None)], "SmolLM2 can't see images")
    seen, unreadable, missing = chips.chips
    qtbot.waitUntil(lambda: seen.thumbnail_shown and bool(unreadable.error))
    assert seen.note_label.text() == "SmolLM2 can't see images"
    assert seen.note_label.property("kind") == "warning"
    assert unreadable.note_label.text() == "cannot be read" and unreadable.error
    assert "cannot be shown" in unreadable.toolTip()
    assert missing.note_label.text() == MISSING and missing.remove_button is None
    assert chips.open_viewer(missing) is None  # nothing to show
    viewer = chips.open_viewer(unreadable)
    assert viewer is not None and viewer.picture.text().startswith("This image cannot be shown")
    viewer.close()
    reads = THUMBNAILS.reads
    chips.set_images([_view(picture), _view(garbage), _view(None)])  # the model sees now
    assert THUMBNAILS.reads == reads  # the chips are new, their thumbnails are not
    assert chips.chips[0].note_label.text() == "≈ 81 tokens"


def test_many_images_wrap_into_rows_instead_of_widening(qtbot: QtBot, tmp_path: Path) -> None:
    picture = tmp_path / "chart.png"
    picture.write_bytes(drawn_png(64, 48))
    for align_right in (False, True):
        chips = ImageChips(removable=True, align_right=align_right)
        qtbot.addWidget(chips)
        chips.set_images([_view(picture)] * 6)
        assert chips.minimumSizeHint().width() <= chips.chips[0].sizeHint().width() + 1
        chips.resize(500, chips.heightForWidth(500))
        chips.show()
        qtbot.waitUntil(lambda c=chips: c.chips[-1].y() > c.chips[0].y())
        assert all(chip.geometry().right() < 500 for chip in chips.chips)
        assert chips.height() >= chips.chips[-1].geometry().bottom()
        # A row starts at the left edge, or for a user's message ends at the right, as the
        # bubble under it does.
        last_row = [c.geometry() for c in chips.chips if c.y() == chips.chips[-1].y()]
        if align_right:
            assert max(g.right() for g in last_row) == 499
        else:
            assert min(g.left() for g in last_row) == 0


def test_an_added_image_keeps_the_chips_already_shown(qtbot: QtBot, tmp_path: Path) -> None:
    picture = tmp_path / "chart.png"
    picture.write_bytes(drawn_png(64, 48))
    chips = ImageChips(removable=True)
    qtbot.addWidget(chips)
    first = _view(picture)
    second = ImageView("page 2.png", 10, 64, 48, "PNG", 81, "cd" * 32, str(picture))
    chips.set_images([first])
    shown = chips.chips[0]
    chips.set_images([first, second])  # a scanned PDF's next page arriving
    assert chips.chips[0] is shown and len(chips.chips) == 2
    removed: list[int] = []
    chips.removeRequested.connect(removed.append)
    chips.chips[1].removeRequested.emit()
    assert removed == [1]
    recounted = _view(picture, tokens=40)  # counted again for another model: shown anew
    chips.set_images([recounted, second])
    assert chips.chips[0] is not shown and chips.chips[0].image.tokens == 40
    chips.set_images([recounted, second], "SmolLM2 can't see images")
    assert chips.chips[1].note_label.text() == "SmolLM2 can't see images"


def test_a_photo_only_qt_may_read_is_kept_as_png(qapp: object, tmp_path: Path) -> None:
    """HEIC, which Qt reads through the platform's plugins where Pillow cannot, goes to the
    store as PNG (here a PNG in disguise: Qt reads by content when it has no HEIC plugin)."""
    from ui.chat.image_files import converted_for_store

    photo = tmp_path / "holiday.heic"
    photo.write_bytes(drawn_png(30, 20))
    data, name = converted_for_store(str(photo)) or (b"", "")
    assert name == "holiday.png"
    assert Image.open(io.BytesIO(data)).size == (30, 20)
    broken = tmp_path / "broken.heic"
    broken.write_bytes(b"not an image")
    assert converted_for_store(str(broken)) is None  # the store says why it cannot be read
    assert converted_for_store(str(tmp_path / "plain.png")) is None  # Pillow reads these
