"""Images as `data:` URLs, the form OpenAI-style chat messages carry them in: read from a
client's request or another app's export, written for a remote server (`image_url_part`)."""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path

from app.images.store import ImageError, inspect

_DATA_URL = re.compile(
    r"^data:(?P<mime>[\w/+.-]*)(?P<params>(?:;[\w.+-]+=[^;,]*)*)(?P<b64>;base64)?,(?P<data>.*)$",
    re.S,
)
_MIME_TYPES = {"JPEG": "image/jpeg", "TIFF": "image/tiff", "HEIF": "image/heic"}


def is_data_url(url: str) -> bool:
    return url[:5].lower() == "data:"


def parse_data_url(url: str, *, strict: bool = True) -> tuple[str, bytes]:
    """(media type, bytes) of a base64 `data:` URL; ImageError saying what is wrong with one
    that is not. `strict=False` skips stray characters in the base64, as browsers do (for
    other apps' exports)."""
    match = _DATA_URL.match(url)
    if match is None or not match.group("b64"):
        raise ImageError("The image is not a base64 data URL (data:image/png;base64,…).")
    text = re.sub(r"\s+", "", match.group("data")) if strict else match.group("data")
    try:
        data = base64.b64decode(text, validate=strict)
    except (binascii.Error, ValueError) as exc:
        raise ImageError(f"The image's data URL holds invalid base64: {exc}.") from exc
    if not data:
        raise ImageError("The image's data URL is empty.")
    return match.group("mime").lower() or "application/octet-stream", data


def data_url(data: bytes, image_format: str) -> str:
    """A base64 `data:` URL for an image's bytes, given Pillow's name for its format."""
    mime = _MIME_TYPES.get(image_format, f"image/{image_format.lower()}")
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def image_url_part(image: str | bytes, name: str) -> dict[str, object]:
    """An engine image part's picture (a kept file's path, or bytes) as OpenAI's `image_url`
    part; ImageError naming it (`name`) when the file is gone or holds no image."""
    if isinstance(image, str):
        try:
            data = Path(image).read_bytes()
        except OSError as exc:
            raise ImageError(f"The image {name} could not be read: {exc.strerror or exc}.") from exc
    else:
        data = image
    _, _, image_format = inspect(data, f"The image {name}")
    return {"type": "image_url", "image_url": {"url": data_url(data, image_format)}}
