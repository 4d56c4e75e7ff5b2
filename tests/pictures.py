"""Small real pictures for the image tests (Pillow only: no model, no MLX)."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image


def picture_bytes(
    size: tuple[int, int] = (40, 30), kind: str = "PNG", colour: int = 0, **save: object
) -> bytes:
    """A `size` picture in `kind`'s format; another `colour` gives other bytes."""
    out = io.BytesIO()
    mode = "RGB" if kind in ("JPEG", "BMP") else "RGBA"
    Image.new(mode, size, (200, 30 + colour % 200, 40)).save(out, kind, **save)
    return out.getvalue()


def scanned_pdf(path: Path, pages: int, size: tuple[int, int] = (300, 400)) -> Path:
    """A PDF of `pages` pictures of `size` points and no text: what a scanner writes."""
    pictures = [Image.new("RGB", size, (40 * i % 256, 100 + i % 128, 200)) for i in range(pages)]
    pictures[0].save(path, format="PDF", save_all=True, append_images=pictures[1:])
    return path
