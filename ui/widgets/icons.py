"""Line icons (resources/icons, from Lucide) drawn in the current palette's colours.

The engine picks its colour when it paints, so icons follow a theme switch without each widget
having to reload them, and SVG keeps them sharp at any scale factor.
"""

from __future__ import annotations

from functools import cache, lru_cache
from importlib import resources

from PySide6.QtCore import QByteArray, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QGuiApplication, QIcon, QIconEngine, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

ColorRole = QPalette.ColorRole


@cache
def _svg_source(name: str) -> str:
    return resources.files("resources").joinpath("icons", f"{name}.svg").read_text("utf-8")


@lru_cache(maxsize=128)
def _renderer(name: str, color: str) -> QSvgRenderer:
    # Icons repaint often (hover, every toolbar of every message); parse each colour once.
    svg = _svg_source(name).replace("currentColor", color)
    return QSvgRenderer(QByteArray(svg.encode()))


class _PaletteSvgEngine(QIconEngine):
    def __init__(self, name: str, role: ColorRole, active_role: ColorRole) -> None:
        super().__init__()
        self._name = name
        self._role = role
        self._active_role = active_role

    def _color(self, mode: QIcon.Mode) -> str:
        palette = QGuiApplication.palette()
        if mode == QIcon.Mode.Disabled:
            return palette.color(QPalette.ColorGroup.Disabled, ColorRole.Text).name()
        role = self._active_role if mode in (QIcon.Mode.Active, QIcon.Mode.Selected) else self._role
        return palette.color(role).name()

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        _renderer(self._name, self._color(mode)).render(painter, QRectF(rect))

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        return self.scaledPixmap(size, mode, state, 1.0)

    def scaledPixmap(
        self, size: QSize, mode: QIcon.Mode, state: QIcon.State, scale: float
    ) -> QPixmap:
        if size.isEmpty():
            return QPixmap()
        pixmap = QPixmap(size * scale)
        pixmap.setDevicePixelRatio(scale)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.paint(painter, QRect(0, 0, size.width(), size.height()), mode, state)
        painter.end()
        return pixmap

    def clone(self) -> QIconEngine:
        return _PaletteSvgEngine(self._name, self._role, self._active_role)


def themed_icon(
    name: str,
    role: ColorRole = ColorRole.PlaceholderText,
    active_role: ColorRole = ColorRole.Text,
) -> QIcon:
    """Icon `name` in the palette colour `role`, and `active_role` when hovered or selected."""
    return QIcon(_PaletteSvgEngine(name, role, active_role))
