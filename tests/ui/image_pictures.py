"""Pictures and engines for the window's image tests and screenshots: a drawn picture that looks
like something (a chart on a card) rather than noise, a scripted engine that reads images as a
vision model's processor would count them, or as a text-only model refuses them, and whether
chips show their thumbnails yet (they are decoded off the GUI thread)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QImage, QLinearGradient, QPainter

from tests.ui.window_harness import ScriptedEngine
from ui.chat.image_chips import ImageChips
from ui.chat.image_files import png_data

# What the scripted vision engine counts for each image, as a small model's processor might.
IMAGE_TOKENS = 81


def thumbnails_shown(chips: ImageChips) -> bool:
    """Whether every chip shows its picture (not the placeholder it shows while decoding)."""
    return all(chip.thumbnail_shown for chip in chips.chips)


def drawn_png(width: int, height: int, hue: int = 210, title: str = "Sales") -> bytes:
    """A `width`×`height` PNG: a gradient card with a bar chart and a title."""
    image = QImage(width, height, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    gradient = QLinearGradient(0, 0, width, height)
    gradient.setColorAt(0, QColor.fromHsv(hue, 60, 250))
    gradient.setColorAt(1, QColor.fromHsv((hue + 40) % 360, 140, 200))
    painter.fillRect(image.rect(), gradient)
    bars = [0.35, 0.6, 0.45, 0.8, 0.7, 0.95]
    gap = width / (len(bars) * 2 + 1)
    for index, share in enumerate(bars):
        bar = QRectF(
            gap * (1 + 2 * index), height * (1 - 0.75 * share) - gap / 2, gap, height * 0.75 * share
        )
        painter.fillRect(bar, QColor.fromHsv((hue + 180) % 360, 170, 180))
    painter.setPen(QColor(30, 30, 40))
    font = QFont()
    font.setPixelSize(max(10, height // 9))
    font.setBold(True)
    painter.setFont(font)
    painter.drawText(
        QRectF(0, height * 0.04, width, height * 0.2), Qt.AlignmentFlag.AlignCenter, title
    )
    painter.end()
    return png_data(image)


class SeeingEngine(ScriptedEngine):
    """Scripted replies; each image part costs `IMAGE_TOKENS`, text a token per 4 characters."""

    def count_prompt_tokens(self, messages: list[dict], template_kwargs: Any = None) -> int:
        total = 0
        for message in messages:
            content = message["content"]
            parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
            total += 4 + sum(
                IMAGE_TOKENS if part["type"] == "image" else len(part["text"]) // 4
                for part in parts
            )
        return total
