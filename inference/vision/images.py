"""An image part of a message opened safely: a path or bytes in, an RGB picture out.

Images are untrusted input: the decoder is given at most MAX_PIXELS pixels (a decompression bomb
is refused by name before its pixels are decoded), a truncated file is refused rather than
padded, EXIF orientation is applied (a photo shows as it was taken), the first frame of an
animation is used, and transparency is flattened onto white, as a person sees it on a page.
"""

from __future__ import annotations

import hashlib
import io
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from inference.errors import PromptError

if TYPE_CHECKING:
    from PIL.Image import Image

# 64 megapixels: an 8K screenshot is 33 MP, a large phone photo 50 MP.
MAX_PIXELS = 64_000_000
MAX_IMAGE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class ImageSource:
    """One image part: its bytes, a name for messages, the longest edge the model is given
    (None: what its processor takes), and the digest of the bytes."""

    data: bytes = field(repr=False)
    name: str
    detail: int | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def image_source(value: object, index: int, detail: object = None) -> ImageSource:
    """The `index`-th image part (1-based, for messages): a path or bytes, and its detail."""
    if detail is not None and (
        not isinstance(detail, int) or isinstance(detail, bool) or detail < 16
    ):
        raise PromptError(f"Image {index}'s detail must be a whole number of pixels (16 or more).")
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(cast("bytes | bytearray | memoryview[int]", value))  # a view of bytes
        name = f"image {index}"
    elif isinstance(value, str | Path):
        path = Path(value)
        name = path.name
        try:
            if path.stat().st_size > MAX_IMAGE_BYTES:
                raise PromptError(f"The image {name} is larger than 64 MiB.")
            data = path.read_bytes()
        except FileNotFoundError as error:
            raise PromptError(f"The image {name} is missing (it was at {path}).") from error
        except OSError as error:
            raise PromptError(f"The image {name} could not be read: {error}.") from error
    else:
        raise PromptError(f"Image {index} must be a file path or bytes.")
    if not data:
        raise PromptError(f"The image {name} is empty.")
    if len(data) > MAX_IMAGE_BYTES:
        raise PromptError(f"The image {name} is larger than 64 MiB.")
    return ImageSource(data, name, detail)


def open_rgb(source: ImageSource) -> Image:
    """The picture as the model is shown it, or PromptError naming the image and the fault."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    bomb = PromptError(
        f"The image {source.name} has more than {MAX_PIXELS // 1_000_000} megapixels; it is "
        "refused as a possible decompression bomb."
    )
    try:
        with warnings.catch_warnings():
            # Pillow warns past its own limit before a single pixel is decoded: refuse there.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            opened = Image.open(io.BytesIO(source.data))
    except (Image.DecompressionBombWarning, Image.DecompressionBombError) as error:
        raise bomb from error
    except UnidentifiedImageError as error:
        raise PromptError(f"{source.name} is not an image this app can read.") from error
    except (OSError, ValueError, SyntaxError) as error:
        raise PromptError(f"The image {source.name} is damaged or truncated: {error}") from error
    try:
        with opened:
            width, height = opened.size
            if width * height > MAX_PIXELS:
                raise bomb
            opened.seek(0)  # the first frame of an animation
            opened.load()
            picture = ImageOps.exif_transpose(opened)
            return _flattened(picture)
    except PromptError:
        raise
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as error:
        raise PromptError(f"The image {source.name} is damaged or truncated: {error}") from error


def _flattened(picture: Image) -> Image:
    """RGB, with any transparency laid over white."""
    from PIL import Image

    if picture.mode in ("RGBA", "LA", "PA") or (
        picture.mode == "P" and "transparency" in picture.info
    ):
        rgba = picture.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, rgba).convert("RGB")
    if picture.mode == "I;16" or picture.mode.startswith("I;16"):
        # 16-bit greyscale: scaled to 8 bits rather than clipped to white.
        return picture.point(lambda value: value / 256).convert("L").convert("RGB")
    return picture.convert("RGB")
