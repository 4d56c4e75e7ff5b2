"""The image store: what is kept (once, 0600, by digest), what is refused by name, the size an
image shows at, and what the collector removes."""

from __future__ import annotations

import io
import os
import re
import stat
import time
from pathlib import Path

import pytest
from PIL import Image

from app.images.store import MAX_IMAGE_BYTES, ImageError, ImageStore, StoredImage
from tests.pictures import picture_bytes


def test_an_image_is_kept_once_by_digest_and_private(tmp_path: Path) -> None:
    images = ImageStore(tmp_path)
    source = tmp_path / "photo.png"
    source.write_bytes(picture_bytes())
    first = images.add_file(source)
    again = images.add_bytes(source.read_bytes(), "pasted.png")
    assert first.sha256 == again.sha256 and (first.name, again.name) == ("photo.png", "pasted.png")
    kept = images.path(first.sha256)
    assert kept == tmp_path / "images" / first.sha256[:2] / first.sha256
    assert kept.read_bytes() == source.read_bytes()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert [p for p in (tmp_path / "images").rglob("*") if p.is_file()] == [kept]
    assert images.exists(first.sha256) and not images.exists("0" * 64)
    shown = (first.width, first.height, first.format, first.size)
    assert shown == (40, 30, "PNG", kept.stat().st_size)


def test_the_record_round_trips(tmp_path: Path) -> None:
    image = ImageStore(tmp_path).add_bytes(picture_bytes(), "a.png")
    record = image.as_record(tokens=81)
    assert record == {
        "kind": "image",
        "name": "a.png",
        "size": image.size,
        "sha256": image.sha256,
        "width": 40,
        "height": 30,
        "format": "PNG",
        "tokens": 81,
    }
    assert StoredImage.from_record(record) == image
    with pytest.raises(ImageError):
        StoredImage.from_record({"name": "notes.txt", "size": 1, "tokens": 1, "text": "x"})


@pytest.mark.parametrize("kind", ["JPEG", "WEBP", "GIF", "BMP", "TIFF"])
def test_the_common_formats_are_accepted(tmp_path: Path, kind: str) -> None:
    image = ImageStore(tmp_path).add_bytes(picture_bytes(kind=kind), f"x.{kind.lower()}")
    assert (image.width, image.height, image.format) == (40, 30, kind)


def test_an_animation_is_accepted_by_its_first_frame(tmp_path: Path) -> None:
    out = io.BytesIO()
    frames = [Image.new("RGB", (16, 12), colour) for colour in ("red", "blue")]
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:])
    assert ImageStore(tmp_path).add_bytes(out.getvalue(), "anim.gif").width == 16


def test_the_size_is_the_one_shown_after_exif_orientation(tmp_path: Path) -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # turned a quarter: shown 30 wide, 40 high
    data = picture_bytes(kind="JPEG", exif=exif.tobytes())
    image = ImageStore(tmp_path).add_bytes(data, "portrait.jpg")
    assert (image.width, image.height) == (30, 40)


def test_a_truncated_file_is_refused_by_name(tmp_path: Path) -> None:
    data = picture_bytes((200, 200), "JPEG")
    with pytest.raises(ImageError, match=re.escape("cut.jpg is damaged or truncated")):
        ImageStore(tmp_path).add_bytes(data[: len(data) // 2], "cut.jpg")
    assert not (tmp_path / "images").exists()


def test_a_decompression_bomb_is_refused_by_name(tmp_path: Path) -> None:
    out = io.BytesIO()
    Image.new("1", (9000, 9000)).save(out, "PNG")  # 81 megapixels in a few kilobytes
    with pytest.raises(ImageError, match=re.escape("bomb.png has more than 64 megapixels")):
        ImageStore(tmp_path).add_bytes(out.getvalue(), "bomb.png")


def test_other_files_and_formats_are_refused_by_name(tmp_path: Path) -> None:
    images = ImageStore(tmp_path)
    with pytest.raises(ImageError, match=re.escape("notes.txt is not an image")):
        images.add_bytes(b"hello", "notes.txt")
    out = io.BytesIO()
    Image.new("RGB", (8, 8)).save(out, "ICO")
    with pytest.raises(ImageError, match=re.escape("icon.ico is a ICO image; only PNG")):
        images.add_bytes(out.getvalue(), "icon.ico")
    with pytest.raises(ImageError, match=re.escape("huge.png is too large")):
        images.add_bytes(b"\x89PNG" + bytes(MAX_IMAGE_BYTES), "huge.png")
    with pytest.raises(ImageError, match=re.escape("gone.png")):
        images.add_file(tmp_path / "gone.png")


def test_a_digest_never_names_a_path_outside_the_store(tmp_path: Path) -> None:
    with pytest.raises(ImageError):
        ImageStore(tmp_path).path("../../etc/passwd")
    assert not ImageStore(tmp_path).exists("../x")


def test_the_collector_removes_only_old_unreferenced_images(tmp_path: Path) -> None:
    images = ImageStore(tmp_path)
    kept, dropped, fresh = (
        images.add_bytes(picture_bytes((8 + i, 8)), f"{i}.png") for i in range(3)
    )
    hour_ago = time.time() - 7200
    for image in (kept, dropped):
        os.utime(images.path(image.sha256), (hour_ago, hour_ago))
    assert images.remove_unreferenced({kept.sha256}) == 1
    assert images.exists(kept.sha256) and images.exists(fresh.sha256)
    assert not images.exists(dropped.sha256)
    assert images.remove_unreferenced(set(), older_than_s=0) == 2
    assert list((tmp_path / "images").iterdir()) == []
