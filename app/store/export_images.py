"""The images of an exported conversation: their bytes travel inside the export file only,
as `"images": {sha256: base64}` beside the messages (the database never holds them), and an
import checks each against its digest before the image store keeps it."""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, cast

from app.images.store import ImageError, ImageStore, is_image_record
from app.store.records import InvalidInputError


def image_records(attachment_lists: Iterable[Iterable[dict[str, Any]]]) -> dict[str, str]:
    """{digest: name} of the images these messages' attachments name, in their order."""
    found: dict[str, str] = {}
    for attachments in attachment_lists:
        for item in attachments:
            if is_image_record(item):
                found.setdefault(item["sha256"], item["name"])
    return found


def images_json(named: Mapping[str, str], images: ImageStore) -> dict[str, str]:
    """{digest: base64 of the bytes} for each named image the store still has; one that is
    gone is left out (its record stays, marked by its absence here)."""
    out: dict[str, str] = {}
    for digest, name in named.items():
        try:
            out[digest] = base64.b64encode(images.read(digest, name)).decode("ascii")
        except ImageError:
            continue
    return out


def images_from_json(value: object, where: str = '"images"') -> dict[str, bytes]:
    """The bytes of an export's images, each checked against its digest; refuses the file
    (InvalidInputError) at the first one that is not what it says."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{where} must be a JSON object, not {type(value).__name__}.")
    out: dict[str, bytes] = {}
    for digest, text in cast("Mapping[str, object]", value).items():  # JSON: text keys
        if not isinstance(text, str):
            raise InvalidInputError(f"{where}[{digest!r}] must be base64 text.")
        try:
            data = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InvalidInputError(f"{where}[{digest!r}] is not valid base64.") from exc
        if hashlib.sha256(data).hexdigest() != digest:
            raise InvalidInputError(f"{where}[{digest!r}] does not hold the image it names.")
        out[digest] = data
    return out


def keep_images(images: ImageStore, data: Mapping[str, bytes], named: Mapping[str, str]) -> None:
    """Keep an import's images (before its messages are written: an image no message ends up
    naming is collected later). Bytes that are not an image the app takes refuse the import."""
    for digest, payload in data.items():
        try:
            images.add_bytes(payload, named.get(digest, digest))
        except ImageError as exc:
            raise InvalidInputError(f"The export's image: {exc}") from exc
