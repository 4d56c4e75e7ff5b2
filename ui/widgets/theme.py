"""Light and dark palettes plus the app style sheet; "system" follows the desktop's colour scheme.

Widgets never hard-code colours: they take them from the QPalette (and `colors_for(is_dark(...))`
where a palette role does not fit), so switching themes restyles everything at once.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from importlib import resources
from string import Template
from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QWidget

ThemeMode = Literal["light", "dark", "system"]
THEME_MODES: tuple[ThemeMode, ...] = ("light", "dark", "system")
_MODE_PROPERTY = "branchwiseThemeMode"


@dataclass(frozen=True)
class ThemeColors:
    window: str
    sidebar: str
    surface: str
    text: str
    muted: str
    border: str
    hover: str
    selected: str
    accent: str
    accent_text: str
    link: str
    user_bubble: str
    code_bg: str
    code_header: str
    inline_code_bg: str
    danger: str
    warning: str
    mark: str  # behind found text (a source's excerpt in its page): the text colour stays
    pygments_style: str


LIGHT = ThemeColors(
    window="#ffffff",
    sidebar="#f6f6f7",
    surface="#ffffff",
    text="#1f2328",
    muted="#6b7280",
    border="#dfe1e5",
    hover="#ececef",
    selected="#e2e4ea",
    accent="#2563eb",
    accent_text="#ffffff",
    link="#1d4ed8",
    user_bubble="#eef1f6",
    code_bg="#f4f5f7",
    code_header="#e7e9ed",
    inline_code_bg="#eceef2",
    danger="#c62828",
    warning="#a15c00",
    mark="#fbe9a6",
    pygments_style="xcode",
)

DARK = ThemeColors(
    window="#202124",
    sidebar="#18191b",
    surface="#2a2b2f",
    text="#e8e8ea",
    muted="#9aa0a6",
    border="#3a3c42",
    hover="#2c2d31",
    selected="#34363c",
    accent="#3b82f6",
    accent_text="#ffffff",
    link="#7cb0ff",
    user_bubble="#303238",
    code_bg="#0d1117",
    code_header="#1b2029",
    inline_code_bg="#33353b",
    danger="#ff7b72",
    warning="#e3b341",
    mark="#5b4a1a",
    pygments_style="github-dark",
)


def colors_for(dark: bool) -> ThemeColors:
    return DARK if dark else LIGHT


def is_dark(palette: QPalette | None = None) -> bool:
    """Whether a palette (by default the application's) is a dark one.

    Widgets ask about the application palette: a style sheet's `background: transparent`
    leaves a transparent (black-looking) Window colour in the widget's own palette.
    """
    window = (palette or QGuiApplication.palette()).color(QPalette.ColorRole.Window)
    return window.lightness() < 128


def system_prefers_dark() -> bool:
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def build_palette(colors: ThemeColors) -> QPalette:
    palette = QPalette()
    role = QPalette.ColorRole
    for r, value in (
        (role.Window, colors.window),
        (role.Base, colors.surface),
        (role.AlternateBase, colors.sidebar),
        (role.WindowText, colors.text),
        (role.Text, colors.text),
        (role.ButtonText, colors.text),
        (role.Button, colors.surface),
        (role.BrightText, colors.accent_text),
        (role.Highlight, colors.accent),
        (role.HighlightedText, colors.accent_text),
        (role.Link, colors.link),
        (role.LinkVisited, colors.link),
        (role.PlaceholderText, colors.muted),
        (role.ToolTipBase, colors.surface),
        (role.ToolTipText, colors.text),
        (role.Mid, colors.border),
        (role.Midlight, colors.hover),
    ):
        palette.setColor(r, QColor(value))
    disabled = QPalette.ColorGroup.Disabled
    for r in (role.WindowText, role.Text, role.ButtonText):
        palette.setColor(disabled, r, QColor(colors.muted))
    return palette


def style_sheet(colors: ThemeColors) -> str:
    template = resources.files("resources").joinpath("theme.qss").read_text(encoding="utf-8")
    return Template(template).substitute(asdict(colors))


def apply_theme(app: QApplication, mode: ThemeMode) -> None:
    """Restyle the whole application; with "system", keep following the desktop's changes."""
    if mode not in THEME_MODES:
        raise ValueError(f"Unknown theme {mode!r}: choose one of {', '.join(THEME_MODES)}.")
    first_time = app.property(_MODE_PROPERTY) is None
    app.setProperty(_MODE_PROPERTY, mode)
    if first_time:
        # One connection for the app's lifetime; it only acts while the mode is "system".
        app.styleHints().colorSchemeChanged.connect(_on_system_scheme_changed)
    dark = mode == "dark" or (mode == "system" and system_prefers_dark())
    colors = colors_for(dark)
    app.setStyle("Fusion")
    app.setPalette(build_palette(colors))
    app.setStyleSheet(style_sheet(colors))


def _on_system_scheme_changed(_scheme: Qt.ColorScheme) -> None:
    app = QApplication.instance()
    if isinstance(app, QApplication) and app.property(_MODE_PROPERTY) == "system":
        apply_theme(app, "system")


def em(widget: QWidget, factor: float = 1.0) -> int:
    """`factor` times the font's line height, the same unit as "em" in the style sheet."""
    return round(widget.fontMetrics().height() * factor)


def scale_font(widget: QWidget, factor: float, bold: bool = False) -> None:
    """Make a label's text bigger or smaller relative to the app font (the style sheet's
    font-size only takes pt or px)."""
    font = widget.font()
    font.setPointSizeF(font.pointSizeF() * factor)
    font.setBold(bold)
    widget.setFont(font)
