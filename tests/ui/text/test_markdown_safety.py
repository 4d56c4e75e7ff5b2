"""Untrusted model output cannot run HTML, load files or remote images, or open odd links."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QByteArray, QPoint, Qt, QUrl
from PySide6.QtGui import QColor, QDesktopServices, QGuiApplication, QImage, QTextDocument
from pytestqt.qtbot import QtBot

from ui.text.markdown_render import render
from ui.text.safe_browser import SafeBrowser


class RecordingBrowser(SafeBrowser):
    """Records every resource Qt asks for, to show that nothing is ever fetched."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[str] = []

    def loadResource(self, type: int, name: QUrl) -> object:
        self.requests.append(name.toString())
        return super().loadResource(type, name)


@pytest.fixture
def browser(qtbot: QtBot) -> RecordingBrowser:
    widget = RecordingBrowser()
    qtbot.addWidget(widget)
    widget.resize(600, 300)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    urls: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: urls.append(url.toString()))
    return urls


@pytest.fixture
def big_png(tmp_path: Path) -> Path:
    path = tmp_path / "big.png"
    image = QImage(400, 400, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.red)
    assert image.save(str(path))
    return path


def _point_on(browser: SafeBrowser, text: str, occurrence: int = 0) -> QPoint:
    """A point inside the `occurrence`-th appearance of `text` on screen."""
    cursor = browser.document().find(text)
    for _ in range(occurrence):
        cursor = browser.document().find(text, cursor)
    assert not cursor.isNull(), f"{text!r} is not shown"
    cursor.setPosition(cursor.selectionStart() + 1)
    return browser.cursorRect(cursor).center()


def _click(qtbot: QtBot, browser: SafeBrowser, point: QPoint) -> None:
    qtbot.mouseClick(browser.viewport(), Qt.MouseButton.LeftButton, pos=point)


def test_raw_html_is_shown_as_text_not_interpreted(browser: RecordingBrowser) -> None:
    source = "<script>alert(1)</script> and <b>not bold</b> <img src=x onerror=alert(1)>"
    browser.set_markdown(source, dark=False)

    assert "<script>" not in render(source, dark=False)
    assert browser.toPlainText().strip() == source
    assert not browser.document().find("not bold").charFormat().font().bold()
    assert browser.requests == []


@pytest.mark.parametrize(
    "markdown",
    ["![x](file:///dev/zero)", "![chart](https://example.com/chart.png)", "![i](big.png)"],
)
def test_images_render_as_text_and_load_nothing(browser: RecordingBrowser, markdown: str) -> None:
    browser.set_markdown(f"Look: {markdown} done", dark=False)

    alt = markdown[2 : markdown.index("]")]
    assert f"[image: {alt}]" in browser.toPlainText()
    assert "<img" not in render(markdown, dark=False)
    assert browser.requests == []


@pytest.mark.parametrize("form", ["file-url", "absolute-path", "relative-path"])
def test_even_an_injected_img_tag_is_never_read_from_disk(
    browser: RecordingBrowser, big_png: Path, form: str
) -> None:
    # Bypass the renderer: the browser itself must refuse to load the file. (An empty
    # QByteArray is not enough here: Qt then loads the image by its file name.)
    src = {
        "file-url": QUrl.fromLocalFile(str(big_png)).toString(),
        "absolute-path": str(big_png),
        "relative-path": big_png.name,
    }[form]
    browser.setSearchPaths([str(big_png.parent)])
    browser.setHtml(f'<p>before</p><img src="{src}"><p>after</p>')
    browser.document().adjustSize()

    assert len(browser.requests) == 1
    assert browser.document().size().height() < 200, "the 400-pixel image was loaded"


def test_an_injected_style_sheet_link_is_never_read(
    browser: RecordingBrowser, tmp_path: Path
) -> None:
    css = tmp_path / "red.css"
    css.write_text("p { color: #ff0000; }")
    link = f'<link rel="stylesheet" type="text/css" href="{css}">'
    browser.setHtml(f"<html><head>{link}</head><body><p>hello</p></body></html>")

    assert browser.requests == [str(css)]
    colour = browser.document().find("hello").charFormat().foreground().color()
    assert colour != QColor("#ff0000")


def test_load_resource_gives_placeholders_never_none(
    browser: RecordingBrowser, big_png: Path
) -> None:
    kinds = QTextDocument.ResourceType
    for url in (QUrl.fromLocalFile(str(big_png)), QUrl("https://example.com/a.png")):
        image = browser.loadResource(kinds.ImageResource.value, url)
        assert isinstance(image, QImage)
        assert image.size().width() == 1, "a 1x1 placeholder, not the file"
        for kind in (kinds.StyleSheetResource, kinds.HtmlResource, kinds.MarkdownResource):
            data = browser.loadResource(kind.value, url)
            assert isinstance(data, QByteArray)
            assert data.isEmpty()


@pytest.mark.parametrize(
    "link",
    [
        "[run me](javascript:alert(1))",
        "[passwords](file:///etc/passwd)",
        "[page](data:text/html,<b>x</b>)",
        "[local](notes/plan.md)",
    ],
)
def test_non_web_links_are_plain_text_not_clickable(browser: RecordingBrowser, link: str) -> None:
    label = link[1 : link.index("]")]
    browser.set_markdown(f"See {link} now", dark=False)

    assert "<a " not in render(link, dark=False)
    assert browser.toPlainText().strip() == f"See {label} now"
    assert browser.anchorAt(_point_on(browser, label)) == ""


def test_clicking_a_web_link_opens_it_in_the_system_browser(
    qtbot: QtBot, browser: RecordingBrowser, opened: list[str]
) -> None:
    browser.set_markdown("Read [the docs](https://example.com/docs?a=1) first.", dark=False)

    _click(qtbot, browser, _point_on(browser, "the docs"))

    assert opened == ["https://example.com/docs?a=1"]
    assert browser.toPlainText().startswith("Read the docs"), "the browser did not navigate"


def test_copy_anchor_copies_that_code_block(
    qtbot: QtBot, browser: RecordingBrowser, opened: list[str]
) -> None:
    browser.set_markdown("```python\nfirst = 1\n```\n\n```sh\necho second\n```", dark=False)

    with qtbot.waitSignal(browser.codeCopied) as copied:
        _click(qtbot, browser, _point_on(browser, "Copy", occurrence=1))

    assert copied.args == [1]
    assert QGuiApplication.clipboard().text() == "echo second\n"
    assert opened == []


def test_height_fits_the_content_without_inner_scrolling(
    qtbot: QtBot, browser: RecordingBrowser
) -> None:
    browser.set_markdown("line\n\n" * 3, dark=False)
    short = browser.height()
    browser.set_markdown("line\n\n" * 30, dark=False)

    qtbot.waitUntil(lambda: browser.height() > 5 * short)
    assert browser.verticalScrollBar().maximum() == 0


@pytest.mark.parametrize("href", ["file:///etc/passwd", "javascript:alert(1)", "notes.html"])
def test_an_injected_non_web_anchor_opens_nothing_when_clicked(
    qtbot: QtBot, browser: RecordingBrowser, opened: list[str], href: str
) -> None:
    # Bypass the renderer: the browser's own click handling must refuse it too.
    browser.setHtml(f'<p>Go <a href="{href}">there</a> now</p>')
    point = _point_on(browser, "there")
    assert browser.anchorAt(point) == href

    with qtbot.waitSignal(browser.anchorClicked):
        _click(qtbot, browser, point)

    assert opened == []
    assert browser.toPlainText() == "Go there now", "the browser did not navigate"
