"""A chat prompt with images: the rendered template's text with each image's placeholder
replaced by the image's own expansion (the text its processor makes of it), tokenized whole as
the processor tokenizes it, and the key the branch cache stores it under.

The key is the ids with every image token replaced by ids derived from the image's digest
(negative, so no real token equals one), as mlx-lm's server keys its vision caches. The same
text with another image therefore shares nothing past that image's first token, and everything
before it stays cached. The real ids go to the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from inference.errors import PromptError
from inference.prompt.tool_messages import as_mapping
from inference.vision.images import ImageSource, image_source
from inference.vision.processing import PreparedImage

if TYPE_CHECKING:
    from inference.prompt.chat_prompt import RenderedPrompt

_KEY_SPACE = 2**62


@dataclass(frozen=True)
class ImageSpan:
    """One image's tokens in the prompt: from its first image token to its last (end
    exclusive), and where its image tokens are (SmolVLM's tile markers lie between them)."""

    start: int
    end: int
    image: PreparedImage
    positions: tuple[int, ...]


@dataclass(frozen=True)
class VisionPrompt:
    ids: list[int]
    key: list[int]
    spans: tuple[ImageSpan, ...]
    # (where a placeholder stood in the rendered text, characters its expansion added)
    shifts: tuple[tuple[int, int], ...]
    # the expanded text's token ends: character offset -> tokens up to it
    token_ends: Mapping[int, int]
    # Image tokens attend both ways (Family.atomic_images): each image is computed whole.
    atomic: bool = False

    def whole_spans(self) -> tuple[tuple[int, int], ...]:
        """The (start, end) token ranges no cache cut or prefill chunk end may fall inside:
        every image's when images are atomic, else none."""
        return tuple((s.start, s.end) for s in self.spans) if self.atomic else ()

    def expanded(self, rendered: int, prompt: RenderedPrompt) -> int | None:
        """Where a cut after `rendered` tokens of the rendered prompt (one placeholder per
        image) lies in these ids; None when no token ends there any more (text merged across
        it once the images went in)."""
        if rendered == 0:
            return 0
        if prompt.offsets is None:
            return None
        chars = prompt.offsets[rendered - 1][1]
        added = sum(delta for at, delta in self.shifts if at < chars)
        return self.token_ends.get(chars + added)


def image_key(digest: str, length: int) -> list[int]:
    base = int(digest[:15], 16)
    return [-1 - (base + offset) % _KEY_SPACE for offset in range(length)]


def split_images(messages: object) -> list[dict[str, Any]]:
    """The messages with each image part opened (`{"type": "image", "source": ImageSource}`:
    templates read only the type) and text parts checked. Content that is text stays text."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        return messages  # type: ignore[return-value]  # refused by validate_messages, by name
    out: list[Any] = []  # entries that are not messages pass through, to be refused by index
    count = 0
    for index, message in enumerate(cast("Sequence[object]", messages), start=1):
        fields = as_mapping(message)
        content = fields.get("content") if fields is not None else None
        if content is None or isinstance(content, str) or fields is None:
            out.append(message)  # validated later, with its index
            continue
        if not isinstance(content, Sequence):
            raise PromptError(f"Message {index} has content that is neither text nor parts.")
        parts: list[dict[str, Any]] = []
        for item in cast("Sequence[object]", content):
            part = as_mapping(item) or {}
            kind = part.get("type")
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
        out.append({**fields, "content": parts})
    return out


def image_sources(messages: Sequence[object]) -> list[ImageSource]:
    """The images of `split_images`'s messages, in prompt order."""
    return [
        part["source"]
        for message in messages
        if (fields := as_mapping(message)) is not None and isinstance(fields.get("content"), list)
        for part in fields["content"]
        if part.get("type") == "image"
    ]


def text_only(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages whose parts are all text, with their text joined (what text models read)."""
    if not isinstance(messages, list):  # pyright: ignore[reportUnnecessaryIsInstance]  # split_images passes non-lists on
        return messages  # refused by validate_messages, by name
    return [
        {**m, "content": "".join(p["text"] for p in m["content"])}
        if isinstance(m, Mapping) and isinstance(m.get("content"), list)  # pyright: ignore[reportUnnecessaryIsInstance]  # so are non-messages
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
    prompt: RenderedPrompt,
    tokenizer: Any,
    placeholder: str,
    image_token_id: int,
    images: Sequence[PreparedImage],
    atomic: bool = False,
) -> VisionPrompt:
    """The prompt with the k-th placeholder replaced by the k-th image's expansion, tokenized
    as one text (as the processor does: text around an image may merge with its expansion's
    edges, as Gemma's newlines do), and its key; `atomic`: the model's image tokens attend both
    ways."""
    text = prompt.text
    if text is None:
        raise PromptError("Images need the model's fast tokenizer (tokenizer.json).")
    pieces = text.split(placeholder)
    if len(pieces) != len(images) + 1:
        raise PromptError(
            f"The chat template wrote {len(pieces) - 1} image placeholder(s) for "
            f"{len(images)} image(s); this model's template does not place images where they "
            "were sent."
        )
    parts = [pieces[0]]
    windows: list[tuple[int, int]] = []
    shifts: list[tuple[int, int]] = []
    length = len(pieces[0])
    for image, after in zip(images, pieces[1:], strict=True):
        shifts.append((length - sum(d for _, d in shifts), len(image.text) - len(placeholder)))
        windows.append((length, length + len(image.text)))
        parts += [image.text, after]
        length += len(image.text) + len(after)
    encoded = tokenizer._tokenizer(
        "".join(parts), add_special_tokens=False, return_offsets_mapping=True
    )
    ids = [int(i) for i in encoded["input_ids"]]
    offsets = [(int(a), int(b)) for a, b in encoded["offset_mapping"]]
    key = list(ids)
    spans: list[ImageSpan] = []
    for image, (begin, end) in zip(images, windows, strict=True):
        positions = tuple(
            i
            for i, (a, b) in enumerate(offsets)
            if ids[i] == image_token_id and begin <= a and b <= end
        )
        if len(positions) != image.token_ids.count(image_token_id):
            raise PromptError(f"The image {image.name} did not tokenize as its processor said.")
        for position, value in zip(positions, image_key(image.digest, len(positions)), strict=True):
            key[position] = value
        spans.append(ImageSpan(positions[0], positions[-1] + 1, image, positions))
    token_ends = {end: index + 1 for index, (_, end) in enumerate(offsets)}
    return VisionPrompt(ids, key, tuple(spans), tuple(shifts), token_ends, atomic)
