"""Images in the local server's chat requests: OpenAI's `{"type": "image_url", "image_url":
{"url": "data:image/png;base64,…"}}` content parts, passed to the engine as image parts holding
the bytes, in the order the client sent them among its text parts.

Only data URLs are taken: an http(s) URL is refused with a 400 saying remote images are not
fetched (the server never reaches out on a client's behalf), and a malformed data URL or bytes
that are no image the app reads are refused with a 400 naming the part, never a 500. OpenAI's
`detail` ("low", "high", "auto") has no pixel meaning here and is ignored.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from app.images.data_urls import is_data_url, parse_data_url
from app.images.store import ImageError, inspect
from app.server.guard import ApiError

# The largest request body taken: room for a 64 MiB image as base64 (86 MiB) and the rest of
# the chat (aiohttp's own default, 1 MiB, would refuse most photos).
MAX_REQUEST_BYTES = 128 * 1024 * 1024


def has_images(content: object) -> TypeGuard[list[Any]]:
    """Whether `content` is a list of parts holding an image part (True: it is a list)."""
    return isinstance(content, list) and any(
        isinstance(part, dict) and part.get("type") == "image_url" for part in content
    )


def image_content(content: list[Any], param: str) -> list[dict[str, Any]]:
    """A message's parts as the engine takes them: `{"type": "text", "text"}` and
    `{"type": "image", "image": bytes}`; ApiError (400) for any part that is neither."""
    parts: list[dict[str, Any]] = []
    for index, part in enumerate(content):
        where = f"{param}[{index}]"
        if isinstance(part, dict) and part.get("type") == "image_url":
            parts.append({"type": "image", "image": _image_bytes(part.get("image_url"), where)})
            continue
        text = part.get("text") if isinstance(part, dict) and part.get("type") == "text" else None
        if not isinstance(text, str):
            raise _bad(
                f"{where} must be a {{'type': 'text', 'text': …}} or an 'image_url' part.", where
            )
        parts.append({"type": "text", "text": text})
    return parts


def _image_bytes(value: object, where: str) -> bytes:
    url = value.get("url") if isinstance(value, dict) else value
    if not isinstance(url, str) or not url:
        raise _bad(f"{where}.image_url must hold a 'url' (a data: URL).", f"{where}.image_url")
    if url[:8].lower() == "https://" or url[:7].lower() == "http://":
        raise _bad(
            f"{where}: remote images are not fetched; send the image itself as a data URL "
            "(data:image/png;base64,…).",
            f"{where}.image_url",
        )
    if not is_data_url(url):
        raise _bad(f"{where}: an image URL must be a data: URL.", f"{where}.image_url")
    try:
        _, data = parse_data_url(url)
        inspect(data, f"The image in {where}")
    except ImageError as exc:
        raise _bad(f"{where}: {exc}", f"{where}.image_url") from None
    return data


def _bad(message: str, param: str) -> ApiError:
    return ApiError(400, message, code="invalid_request", param=param)
