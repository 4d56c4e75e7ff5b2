"""Images for a message being written, as the window asks for them: which dropped or chosen
files are images, what the kept image comes back as (`ImageAttached`), a scanned PDF offered as
page images (`ScannedPdf`), and whether the loaded model can see images at all (`ModelSight`),
in the words the chips and the refusals use.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.images.pdf_pages import MAX_PAGES
from app.images.store import StoredImage

if TYPE_CHECKING:
    from app.generation.worker_events import ModelLoaded

# Files the paperclip, a paste or a drop sends to the image store rather than reads as text:
# the formats `app.images.store` accepts, by their usual names.
IMAGE_SUFFIXES = frozenset(
    {".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp", ".tif", ".tiff", ".heic", ".heif"}
)


def is_image_path(path: str | Path) -> bool:
    return Path(path).suffix.lower() in IMAGE_SUFFIXES


@dataclass(frozen=True)
class ImageAttached:
    """An image kept for a draft: the chat it was asked for, the image, the tokens it costs the
    loaded model (0 when that model cannot see it) and the message whose editor asked for it
    (None: the composer's draft)."""

    conversation_id: int
    image: StoredImage
    tokens: int
    for_message: int | None = None

    @property
    def record(self) -> dict[str, Any]:
        """The attachment record the message will keep."""
        return self.image.as_record(self.tokens)


@dataclass(frozen=True)
class ScannedPdf:
    """A PDF with no text layer, offered to the draft of `conversation_id` as one image per
    page: its `pages`, and `page_tokens`, what its first page costs the loaded model at its
    image detail (a scanner's pages share a size, so the others cost about as much)."""

    conversation_id: int
    path: str
    name: str
    pages: int
    page_tokens: int

    @property
    def most(self) -> int:
        """The last page one attachment can reach from page 1 (pdf_pages.MAX_PAGES at once)."""
        return min(self.pages, MAX_PAGES)


@dataclass(frozen=True)
class ModelSight:
    """Whether the loaded model sees images; when not, `blind` is what an image's chip says
    ("SmolLM2 can't see images") and `refusal` why a message with images is not sent."""

    sees: bool
    blind: str = ""
    refusal: str = ""


def model_sight(model_info: ModelLoaded | None) -> ModelSight:
    """What the loaded model (its info from the worker) makes of images. With no model loaded
    nothing is said yet: sending waits for a model anyway."""
    if model_info is None or model_info.vision:
        return ModelSight(True)
    name = model_info.model_id or "This model"
    reason = model_info.text_only_reason
    return ModelSight(
        False,
        f"{name} can't see images",
        f"{name} can't see images: it is a text-only model.{f' {reason}' if reason else ''}"
        " Remove the images, or load a vision model, to send this message.",
    )


def unreadable_scan(name: str, sight: ModelSight) -> str:
    """Why the scanned PDF `name` cannot be attached for a model that cannot see images."""
    return (
        f"{name} has no text layer: it is a scanned document, whose pages are images. "
        f"{sight.blind}, so it cannot read scanned pages. Load a vision model to attach its "
        "pages as images."
    )
