"""A chat prompt with images: the rendered template's ids with each image's placeholder
replaced by the image's own token run, and the key the branch cache stores it under.

The key is the ids with every image's run replaced by ids derived from the image's digest
(negative, so no real token equals one), as mlx-lm's server keys its vision caches. The same
text with another image therefore shares nothing past that image's start, and everything before
it stays cached. The real ids go to the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inference.errors import PromptError
from inference.vision.images import ImageSource, image_source
from inference.vision.processing import PreparedImage

_KEY_SPACE = 2**62


@dataclass(frozen=True)
class ImageSpan:
    """Where one image's run lies in the prompt's ids (end exclusive)."""

    start: int
    end: int
    image: PreparedImage
    placeholder: int  # where the template's placeholder stood in the rendered ids


@dataclass(frozen=True)
class VisionPrompt:
    ids: list[int]
    key: list[int]
    spans: tuple[ImageSpan, ...]

    def inside_image(self, position: int) -> ImageSpan | None:
        """The image whose run holds tokens on both sides of a cut at `position`."""
        return next((s for s in self.spans if s.start < position < s.end), None)

    def expanded(self, rendered: int) -> int:
        """Where position `rendered` of the template's ids (one placeholder per image) lies
        once each image's run is in."""
        return rendered + sum(
            len(span.image.token_ids) - 1 for span in self.spans if span.placeholder < rendered
        )


def image_key(digest: str, length: int) -> list[int]:
    base = int(digest[:15], 16)
    return [-1 - (base + offset) % _KEY_SPACE for offset in range(length)]


def split_images(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The messages with each image part opened (`{"type": "image", "source": ImageSource}`:
    templates read only the type) and text parts checked. Content that is text stays text."""
    out: list[Any] = []
    count = 0
    for index, message in enumerate(messages, start=1):
        content = message.get("content") if isinstance(message, Mapping) else None
        if content is None or isinstance(content, str) or not isinstance(message, Mapping):
            out.append(message)  # validated later, with its index
            continue
        if not isinstance(content, Sequence):
            raise PromptError(f"Message {index} has content that is neither text nor parts.")
        parts: list[dict[str, Any]] = []
        for part in content:
            kind = part.get("type") if isinstance(part, Mapping) else None
            if kind == "text" and isinstance(part.get("text"), str):
                parts.append({"type": "text", "text": part["text"]})
            elif kind == "image":
                count += 1
                source = image_source(part.get("image"), count, part.get("detail"))
                parts.append({"type": "image", "source": source})
            else:
                raise PromptError(
                    f"Message {index} has a part that is neither "
                    "{'type': 'text', 'text': …} nor {'type': 'image', 'image': …}."
                )
        out.append({**message, "content": parts})
    return out


def image_sources(messages: Sequence[Mapping[str, Any]]) -> list[ImageSource]:
    """The images of `split_images`'s messages, in prompt order."""
    return [
        part["source"]
        for message in messages
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image"
    ]


def text_only(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages whose parts are all text, with their text joined (what text models read)."""
    return [
        {**m, "content": "".join(p["text"] for p in m["content"])}
        if isinstance(m.get("content"), list)
        else m
        for m in messages
    ]


def as_parts(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every message's text as a parts list, as vision templates read content (tool results
    stay text)."""
    return [
        {**m, "content": [{"type": "text", "text": m["content"]}]}
        if isinstance(m.get("content"), str) and m.get("role") != "tool"
        else m
        for m in messages
    ]


def expand(
    ids: list[int], placeholder_id: int, images: Sequence[PreparedImage]
) -> VisionPrompt:
    """The prompt with the k-th placeholder replaced by the k-th image's run, and its key."""
    found = ids.count(placeholder_id)
    if found != len(images):
        raise PromptError(
            f"The chat template wrote {found} image placeholder(s) for {len(images)} image(s); "
            "this model's template does not place images where they were sent."
        )
    out: list[int] = []
    key: list[int] = []
    spans: list[ImageSpan] = []
    images_left = iter(images)
    for index, token in enumerate(ids):
        if token != placeholder_id:
            out.append(token)
            key.append(token)
            continue
        image = next(images_left)
        start = len(out)
        out.extend(image.token_ids)
        key.extend(image_key(image.digest, len(image.token_ids)))
        spans.append(ImageSpan(start, len(out), image, index))
    return VisionPrompt(out, key, tuple(spans))
