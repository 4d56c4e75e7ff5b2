"""Themes: light, dark and follow-the-system, applied to the real widgets; screenshots of them.

The screenshots land in tests/screenshots/ (not committed) for a person to look at.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QFont, QImage
from PySide6.QtWidgets import QApplication, QHBoxLayout, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

import ui.widgets.theme
from tests.paths import SCREENSHOTS
from ui.chat.chat_view import ChatView
from ui.chat.composer import Composer
from ui.chat.message_widget import MessageWidget
from ui.sidebar.sidebar import Sidebar
from ui.widgets.theme import DARK, LIGHT, apply_theme, is_dark
from ui.widgets.view_models import ConversationRow, MessageView

SHOTS = SCREENSHOTS
CODE_REPLY = """Here is a **memoized** version:

```python
from functools import cache

@cache
def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)
```

| n | fib(n) |
|---|-------:|
| 20 | 6,765 |

More in [the docs](https://docs.python.org/3/library/functools.html)."""


@pytest.fixture
def app(qapp: QApplication) -> Iterator[QApplication]:
    """The application, with its look put back afterwards for the other tests."""
    style, palette, sheet = qapp.style().name(), qapp.palette(), qapp.styleSheet()
    font = qapp.font()
    yield qapp
    qapp.setStyleSheet(sheet)
    qapp.setPalette(palette)
    qapp.setStyle(style)
    qapp.setFont(font)
    qapp.setProperty("branchwiseThemeMode", None)


def _pixel(widget: QWidget, point: QPoint) -> QColor:
    return QColor(widget.grab().toImage().pixel(point))


def _mean_lightness(image: QImage) -> float:
    step = 7
    samples = [
        QColor(image.pixel(x, y)).lightness()
        for x in range(0, image.width(), step)
        for y in range(0, image.height(), step)
    ]
    return sum(samples) / len(samples)


def _chat_window(qtbot: QtBot) -> QWidget:
    """Sidebar, chat and composer side by side, the way the main window puts them."""
    window = QWidget()
    qtbot.addWidget(window)
    window.resize(1100, 720)
    sidebar = Sidebar()
    now = datetime.now()
    sidebar.set_conversations(
        [
            ConversationRow("c1", "Fibonacci in Python", updated_at=now),
            ConversationRow("c2", "Trip ideas for Lisbon", updated_at=now - timedelta(hours=3)),
            ConversationRow("c3", "Project notes", pinned=True, updated_at=now - timedelta(days=2)),
        ]
    )
    sidebar.set_current("c1")
    sidebar.setFixedWidth(260)
    chat = ChatView()
    chat.set_messages(
        [
            MessageView(
                "u1",
                "user",
                "How do I compute Fibonacci numbers fast?",
                sibling_index=2,
                sibling_count=3,
            ),
            MessageView(
                "a1",
                "assistant",
                CODE_REPLY,
                sibling_index=1,
                sibling_count=2,
                stats={
                    "generated_tokens": 142,
                    "decode_tps": 38.1,
                    "ttft_s": 0.21,
                    "cached_tokens": 120,
                },
            ),
            MessageView("u2", "user", "And without recursion?"),
            MessageView("a2", "assistant", "Use a loop that keeps", status="stopped"),
        ]
    )
    composer = Composer()
    composer.set_token_info(1900, 2048)
    column = QVBoxLayout()
    column.addWidget(chat, 1)
    column.addWidget(composer)
    row = QHBoxLayout(window)
    row.setContentsMargins(0, 0, 0, 0)
    row.addWidget(sidebar)
    row.addLayout(column, 1)
    window.show()
    qtbot.waitExposed(window)
    return window


@pytest.mark.parametrize(("mode", "colors"), [("light", LIGHT), ("dark", DARK)])
def test_light_and_dark_colour_the_widgets(
    qtbot: QtBot, app: QApplication, mode: str, colors: ui.widgets.theme.ThemeColors
) -> None:
    apply_theme(app, mode)
    widget = MessageWidget(MessageView("u1", "user", "A question in a bubble"))
    qtbot.addWidget(widget)
    widget.resize(500, 120)
    widget.show()
    qtbot.waitExposed(widget)

    assert is_dark() is (mode == "dark")
    bubble = widget.findChild(QWidget, "UserBubble")
    inside = bubble.mapTo(widget, QPoint(4, bubble.height() // 2))
    assert _pixel(widget, inside) == QColor(colors.user_bubble)
    assert widget.body.palette().color(widget.body.foregroundRole()) == QColor(colors.text)


def test_an_unknown_theme_is_refused_with_the_choices(app: QApplication) -> None:
    with pytest.raises(ValueError, match="light, dark, system"):
        apply_theme(app, "sepia")  # type: ignore[arg-type]


def test_system_mode_follows_the_desktop(
    app: QApplication, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ui.widgets.theme, "system_prefers_dark", lambda: True)
    apply_theme(app, "system")
    assert is_dark()

    monkeypatch.setattr(ui.widgets.theme, "system_prefers_dark", lambda: False)
    app.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Light)
    assert not is_dark()

    apply_theme(app, "dark")
    app.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Light)
    assert is_dark(), "a chosen theme stays, whatever the desktop does"


def test_switching_theme_recolours_rendered_code(qtbot: QtBot, app: QApplication) -> None:
    apply_theme(app, "light")
    widget = MessageWidget(MessageView("a1", "assistant", CODE_REPLY))
    qtbot.addWidget(widget)

    def keyword_colour() -> QColor:
        return widget.body.document().find("def").charFormat().foreground().color()

    light = keyword_colour()
    apply_theme(app, "dark")
    qtbot.waitUntil(lambda: keyword_colour() != light)


def test_sizes_follow_the_font_so_large_text_settings_scale_the_layout(
    qtbot: QtBot, app: QApplication
) -> None:
    normal = Composer()
    qtbot.addWidget(normal)
    font = QFont(app.font())
    font.setPointSizeF(font.pointSizeF() * 2)
    app.setFont(font)
    large = Composer()
    qtbot.addWidget(large)

    ratio = large.button.width() / normal.button.width()
    assert 1.7 < ratio < 2.3


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_screenshots_of_the_chat_widgets(qtbot: QtBot, app: QApplication, mode: str) -> None:
    apply_theme(app, mode)
    window = _chat_window(qtbot)
    messages = window.findChildren(MessageWidget)
    qtbot.waitUntil(lambda: all(m.height() > m.body.height() for m in messages))

    SHOTS.mkdir(exist_ok=True)
    path = SHOTS / f"widgets-{mode}.png"
    assert window.grab().save(str(path))
    image = QImage(str(path))
    lightness = _mean_lightness(image)
    assert (lightness < 100) if mode == "dark" else (lightness > 180)
