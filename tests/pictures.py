"""Small real pictures for the image tests (Pillow only: no model, no MLX)."""

from __future__ import annotations

import io

from PIL import Image


def picture_bytes(
    size: tuple[int, int] = (40, 30), kind: str = "PNG", colour: int = 0, **save: object
) -> bytes:
    """A `size` picture in `kind`'s format; another `colour` gives other bytes."""
    out = io.BytesIO()
    mode = "RGB" if kind in ("JPEG", "BMP") else "RGBA"
    Image.new(mode, size, (200, 30 + colour % 200, 40)).save(out, kind, **save)
    return out.getvalue()
