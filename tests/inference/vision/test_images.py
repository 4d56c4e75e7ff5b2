"""Image parts opened as the model is shown them, and refused by name when they cannot be."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from inference import PromptError
from inference.vision.images import ImageSource, image_source, open_rgb


def encoded(picture: Image.Image, fmt: str, **options: object) -> bytes:
    out = io.BytesIO()
    picture.save(out, format=fmt, **options)
    return out.getvalue()


def opened(data: bytes, name: str = "photo") -> Image.Image:
    return open_rgb(ImageSource(data, name))


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP", "GIF", "BMP", "TIFF"])
def test_every_common_format_opens_as_rgb(fmt: str) -> None:
    picture = opened(encoded(Image.new("RGB", (20, 10), (200, 30, 30)), fmt))
    assert picture.mode == "RGB" and picture.size == (20, 10)


def test_exif_orientation_is_applied() -> None:
    tall = Image.new("RGB", (30, 10), (0, 0, 255))
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90° clockwise to show"
    assert opened(encoded(tall, "JPEG", exif=exif)).size == (10, 30)


def test_transparency_is_flattened_onto_white() -> None:
    clear = Image.new("RGBA", (4, 4), (255, 0, 0, 0))
    assert opened(encoded(clear, "PNG")).getpixel((0, 0)) == (255, 255, 255)


def test_an_animation_gives_its_first_frame() -> None:
    frames = [Image.new("RGB", (8, 8), colour) for colour in [(255, 0, 0), (0, 255, 0)]]
    data = encoded(frames[0], "GIF", save_all=True, append_images=frames[1:])
    red, green, _ = opened(data).getpixel((0, 0))
    assert red > 200 and green < 50


def test_sixteen_bit_greyscale_keeps_its_tones() -> None:
    grey = Image.new("I;16", (4, 4), 32768)
    red, green, blue = opened(encoded(grey, "PNG")).getpixel((0, 0))
    assert 120 <= red <= 135 and red == green == blue


def test_a_truncated_file_is_refused_by_name() -> None:
    data = encoded(Image.new("RGB", (64, 64), (1, 2, 3)), "PNG")
    with pytest.raises(PromptError, match=r"The image scan\.png is damaged or truncated"):
        opened(data[: len(data) // 2], "scan.png")


def test_a_decompression_bomb_is_refused_before_decoding() -> None:
    # A 10,000 × 10,000 PNG of one colour is a few kilobytes on disk and 300 MB decoded.
    bomb = encoded(Image.new("1", (10_000, 10_000)), "PNG")
    assert len(bomb) < 1_000_000
    with pytest.raises(PromptError, match="decompression bomb"):
        opened(bomb, "bomb.png")


def test_what_is_not_an_image_is_named() -> None:
    with pytest.raises(PromptError, match=r"notes\.txt is not an image"):
        opened(b"just some text", "notes.txt")


def test_a_part_must_be_a_path_or_bytes_and_not_empty() -> None:
    with pytest.raises(PromptError, match="Image 2 must be a file path or bytes"):
        image_source(42, 2)
    with pytest.raises(PromptError, match="image 1 is empty"):
        image_source(b"", 1)
    with pytest.raises(PromptError, match="detail must be a whole number"):
        image_source(b"x", 1, detail=3)
