"""Assistant Markdown renders as a person expects: structure, highlighted code, copy buttons."""

from __future__ import annotations

from itertools import pairwise

import pytest
from PySide6.QtGui import QColor, QTextCursor, QTextDocument
from pytestqt.qtbot import QtBot

from ui.text.markdown_render import code_blocks, render, stable_prefix_end
from ui.text.safe_browser import SafeBrowser
from ui.widgets.theme import colors_for

SAMPLE = """# Title

## Section

- one
- two

1. first
2. second

| Name | Value |
|------|------:|
| alpha | 1 |
| beta | 22 |

Some `inline code` and ~~old~~ text.

```python
def greet(name):
    return "hi " + name
```

```
plain block
```
"""


@pytest.fixture
def browser(qtbot: QtBot) -> SafeBrowser:
    widget = SafeBrowser()
    qtbot.addWidget(widget)
    widget.resize(600, 400)
    return widget


def _find(document: QTextDocument, text: str) -> QTextCursor:
    cursor = document.find(text)
    assert not cursor.isNull(), f"{text!r} is not in the rendered text"
    return cursor


def test_headings_lists_and_tables_become_real_document_structure(browser: SafeBrowser) -> None:
    browser.set_markdown(SAMPLE, dark=False)
    document = browser.document()

    assert _find(document, "Title").block().blockFormat().headingLevel() == 1
    assert _find(document, "Section").block().blockFormat().headingLevel() == 2
    assert _find(document, "one").block().textList() is not None
    assert _find(document, "first").block().textList() is not None
    alpha = _find(document, "alpha")
    assert alpha.currentTable() is not None
    assert _find(document, "22").currentTable() is alpha.currentTable()
    assert "#" not in document.toPlainText()
    assert "|" not in document.toPlainText()


def test_inline_code_is_monospace_and_strikethrough_is_struck(browser: SafeBrowser) -> None:
    browser.set_markdown(SAMPLE, dark=False)
    document = browser.document()

    inline = _find(document, "inline code").charFormat()
    assert inline.fontFixedPitch() or "mono" in " ".join(inline.fontFamilies()).lower()
    assert _find(document, "old").charFormat().fontStrikeOut()


def test_fenced_code_is_highlighted_by_language(browser: SafeBrowser) -> None:
    browser.set_markdown(SAMPLE, dark=False)
    document = browser.document()

    keyword = _find(document, "def").charFormat().foreground().color()
    string = _find(document, '"hi "').charFormat().foreground().color()
    name = _find(document, "greet").charFormat().foreground().color()
    assert keyword != name, "the keyword is coloured differently from a plain name"
    assert string != name
    plain = _find(document, "plain block").charFormat().foreground().color()
    assert plain in (QColor(colors_for(False).text), QColor())


def test_each_code_block_gets_a_numbered_copy_anchor_matching_its_source() -> None:
    html = render(SAMPLE, dark=False)

    assert '<a href="copy:0">Copy</a>' in html
    assert '<a href="copy:1">Copy</a>' in html
    assert "copy:2" not in html
    assert code_blocks(SAMPLE) == [
        'def greet(name):\n    return "hi " + name\n',
        "plain block\n",
    ]


def test_dark_and_light_themes_colour_code_differently() -> None:
    light = render("```python\nimport os\n```", dark=False)
    dark = render("```python\nimport os\n```", dark=True)

    assert colors_for(True).code_bg in dark
    assert colors_for(False).code_bg in light
    assert light != dark


def test_an_unclosed_fence_renders_as_code_while_streaming(browser: SafeBrowser) -> None:
    partial = "Here you go:\n\n```python\ndef half_written(x):\n    return x +"
    browser.set_markdown(partial, dark=False, streaming=True)
    document = browser.document()

    assert "```" not in document.toPlainText()
    keyword = _find(document, "def").charFormat()
    assert keyword.fontFixedPitch() or "mono" in " ".join(keyword.fontFamilies()).lower()
    name = _find(document, "half_written").charFormat()
    assert keyword.foreground().color() != name.foreground().color()


def test_streaming_then_complete_text_render_the_same(browser: SafeBrowser) -> None:
    text = "A **bold** claim.\n\n```js\nlet x = 1;\n```"
    assert render(text, dark=False, streaming=True) == render(text, dark=False)


STREAMED = """Intro paragraph.

```python
first = 1

second = 2
```

- a list item

- another item

    indented continuation

## A heading

Closing words."""


def _cuts_while_streaming(text: str) -> list[int]:
    """Every place a reply growing one character at a time gets cut."""
    return sorted({stable_prefix_end(text[:length]) for length in range(len(text) + 1)} - {0})


def test_a_streaming_reply_is_cut_only_between_finished_blocks() -> None:
    pieces = [STREAMED[a:b] for a, b in pairwise([0, *_cuts_while_streaming(STREAMED)])]

    assert pieces == [
        "Intro paragraph.\n\n",
        "```python\nfirst = 1\n\nsecond = 2\n```\n\n"
        "- a list item\n\n- another item\n\n    indented continuation\n\n",
        "## A heading\n\n",
    ], "never inside the fence, before a list item or before indented text"


def test_no_cut_inside_an_unclosed_fence_or_before_min_chars() -> None:
    assert stable_prefix_end("Text\n\n```js\nlet a;\n\nlet b;") == len("Text\n\n")
    assert stable_prefix_end("```js\nlet a;\n\nlet b;\n\nmore") == 0
    assert stable_prefix_end("One.\n\nTwo.\n\nThree.", 0, 7) == len("One.\n\nTwo.\n\n")
    assert stable_prefix_end("One.\n\nTwo.", 0, 100) == 0


def test_rendering_in_pieces_shows_the_same_text_as_rendering_whole(qtbot: QtBot) -> None:
    whole, piece = SafeBrowser(), SafeBrowser()
    qtbot.addWidget(whole)
    qtbot.addWidget(piece)
    whole.set_markdown(STREAMED, dark=False)

    texts = []
    for start, end in pairwise([0, *_cuts_while_streaming(STREAMED), len(STREAMED)]):
        piece.set_markdown(STREAMED[start:end], dark=False)
        texts.extend(line for line in piece.toPlainText().splitlines() if line.strip())

    assert texts == [line for line in whole.toPlainText().splitlines() if line.strip()]
