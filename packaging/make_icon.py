"""Draw the app icon (a branching conversation tree) into resources/icon.png.

Run once after changing the drawing, and commit the PNG: `python packaging/make_icon.py`.
The spec turns the PNG into the macOS .icns at build time.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QGuiApplication,
    QImage,
    QLinearGradient,
    QPainter,
    QPainterPath,
    QPen,
)

SIZE = 1024
# Apple's icon grid: the rounded square fills 824 of 1024 pixels, leaving room for the shadow
# macOS draws around it.
TILE = QRectF(100, 100, 824, 824)
TILE_RADIUS = 185
OUT = Path(__file__).resolve().parent.parent / "resources" / "icon.png"

# The tree: a root near the bottom, two branches, the right one forking again, as a conversation
# does when a reply is regenerated. (x, y) in icon pixels.
ROOT = QPointF(512, 770)
FORK = QPointF(512, 590)
LEFT = QPointF(352, 330)
RIGHT_FORK = QPointF(628, 440)
RIGHT_A = QPointF(560, 260)
RIGHT_B = QPointF(730, 290)
EDGES = [
    (ROOT, FORK),
    (FORK, LEFT),
    (FORK, RIGHT_FORK),
    (RIGHT_FORK, RIGHT_A),
    (RIGHT_FORK, RIGHT_B),
]
LEAVES = [LEFT, RIGHT_A, RIGHT_B]


def _curve(start: QPointF, end: QPointF) -> QPainterPath:
    """A branch that leaves its parent vertically and bends towards the child."""
    path = QPainterPath(start)
    mid_y = (start.y() + end.y()) / 2
    path.cubicTo(QPointF(start.x(), mid_y), QPointF(end.x(), mid_y), end)
    return path


def draw_icon() -> QImage:
    image = QImage(SIZE, SIZE, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)

    gradient = QLinearGradient(TILE.topLeft(), TILE.bottomRight())
    gradient.setColorAt(0.0, QColor("#2bb3a3"))
    gradient.setColorAt(1.0, QColor("#1e4e8c"))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QBrush(gradient))
    painter.drawRoundedRect(TILE, TILE_RADIUS, TILE_RADIUS)

    white = QColor("#ffffff")
    pen = QPen(white, 44, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap, Qt.PenJoinStyle.RoundJoin)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    for start, end in EDGES:
        painter.drawPath(_curve(start, end))

    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(white)
    painter.drawEllipse(ROOT, 58, 58)
    for point in (FORK, RIGHT_FORK):
        painter.drawEllipse(point, 40, 40)
    for point in LEAVES:
        painter.drawEllipse(point, 62, 62)
    painter.end()
    return image


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    if not draw_icon().save(str(OUT), "PNG"):
        print(f"could not write {OUT}", file=sys.stderr)
        return 1
    print(f"wrote {OUT}")
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
