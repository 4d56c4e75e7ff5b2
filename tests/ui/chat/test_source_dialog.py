"""A source shown in its page: Show on a source's row opens the page as the knowledge index holds
it (a real index of a PDF), the excerpt marked at its span in the theme's mark colour and
scrolled into view, as plain text; a file changed since shows the excerpt the reply read and
says why; Open, Reveal and Esc work in it. Screenshots, light and dark, go to tests/screenshots/.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from app.generation.knowledge_index import IndexKnowledge
from app.knowledge.context import ExcerptContext
from app.knowledge.index import KnowledgeIndex
from tests.app.knowledge.documents import write
from tests.pdf_files import pdf_bytes
from tests.ui.screenshots.test_screenshots import _save
from ui.chat import source_dialog
from ui.chat.source_dialog import SourceDialog, place_of, utf16_offset
from ui.chat.sources_panel import SourcesPanel
from ui.widgets.theme import DARK, LIGHT, apply_theme
from ui.widgets.view_models import SourceView

_LINES = [
    "Survey of the north harbour, 1998",
    "The breakwater was rebuilt after the storm of 1987.",
    "Depths were sounded at low water along the channel,",
    "and the buoys moved where the sand bar had shifted.",
    "<b>Markup</b> in a document stays text: <a href='https://x'>no link</a>.",
]
_EXCERPT = "The lighthouse keeper logged each ship that passed the point by night."


def _page(n: int) -> str:
    return "\n".join(f"{line} ({n}.{i})" for i, line in enumerate(_LINES * 6))


@pytest.fixture
def indexed(tmp_path: Path) -> Iterator[tuple[IndexKnowledge, SourceView]]:
    pages = [_page(1), _page(2) + "\n" + _EXCERPT + "\n" + _page(3), _page(4)]
    write(tmp_path / "Harbour" / "North harbour survey.pdf", pdf_bytes(pages))
    database = tmp_path / "knowledge.db"
    with KnowledgeIndex.open(database) as index:
        index.add("Harbour records", tmp_path / "Harbour")
        index.sync("Harbour records")
        hit = next(h for h in index.search(["Harbour records"], "keeper") if _EXCERPT in h.text)
    source = SourceView(
        2, "Harbour records", hit.path, hit.page, "Soundings", hit.text, "current",
        hit.start, hit.end, hit.document_sha256,
    )  # fmt: skip
    yield IndexKnowledge(database), source


def _open_from_row(qtbot, base: IndexKnowledge, source: SourceView) -> SourceDialog:
    """The panel's Show, answered as the window answers it."""
    panel = SourcesPanel()
    qtbot.addWidget(panel)
    shown: list[SourceDialog] = []
    panel.showRequested.connect(
        lambda s: shown.append(SourceDialog(s, base.excerpt_context(place_of(s))))
    )
    panel.set_sources([source])
    row = panel.rows[0]
    where = "page" if source.page is not None else "document"
    assert row.show_button.toolTip() == f"Show this excerpt in its {where}"
    qtbot.mouseClick(row.show_button, Qt.MouseButton.LeftButton)
    (dialog,) = shown
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def test_show_opens_the_page_with_the_excerpt_marked(qtbot, indexed) -> None:
    apply_theme(QApplication.instance(), "light")  # type: ignore[arg-type]
    base, source = indexed
    dialog = _open_from_row(qtbot, base, source)
    text = dialog.text.toPlainText()
    assert "(2.0)" in text and "(3.29)" in text and "(1." not in text and "(4." not in text
    assert "<b>Markup</b>" in text and dialog.text.document().toHtml().count("<a ") == 0
    span = dialog.marked_span()
    assert span is not None
    (selection,) = dialog.text.extraSelections()
    assert (selection.cursor.selectionStart(), selection.cursor.selectionEnd()) == span
    assert selection.cursor.selectedText() == source.text.replace("\n", "\u2029")
    assert span[0] == utf16_offset(text, text.index(source.text))
    assert selection.format.background().color() == QColor(LIGHT.mark)
    top = dialog.text.cursorRect().top()  # the text cursor is at the excerpt's start
    assert dialog.text.textCursor().position() == span[0]
    assert dialog.text.verticalScrollBar().value() > 0, "scrolled down to it"
    lines = round(top / dialog.text.fontMetrics().lineSpacing())
    assert lines == 3, "longer than the view: its start near the top, a few lines below it"
    assert dialog.windowTitle() == "[2] North harbour survey.pdf"
    assert dialog.facts.text() == "Page 2 · Soundings · Harbour records"
    assert dialog.scope.text().startswith("Page 2 as the knowledge index holds it")
    assert not dialog.notice.isVisible()
    for theme in ("light", "dark"):
        apply_theme(QApplication.instance(), theme)  # type: ignore[arg-type]
        qtbot.wait(20)
        (marked,) = dialog.text.extraSelections()
        mark = marked.format.background().color()
        assert mark == QColor((DARK if theme == "dark" else LIGHT).mark)
        _save(dialog, f"source-in-its-page-{theme}")
    apply_theme(QApplication.instance(), "light")  # type: ignore[arg-type]


def test_a_changed_file_shows_the_excerpt_read_and_why(
    qtbot, indexed, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, source = indexed
    changed = SourceView(**{**source.__dict__, "state": "changed", "document_sha256": "0" * 64})
    opened: list[tuple[str, str]] = []
    monkeypatch.setattr(source_dialog, "open_file", lambda p: opened.append(("open", p)))
    monkeypatch.setattr(source_dialog, "reveal_file", lambda p: opened.append(("reveal", p)))
    dialog = _open_from_row(qtbot, base, changed)
    assert dialog.text.toPlainText() == source.text
    assert dialog.marked_span() is None and dialog.text.extraSelections() == []
    assert dialog.notice.isVisible() and dialog.notice.text() == (
        "The file has changed since this reply read it, so its page may differ now. "
        "Shown is the excerpt as this reply read it."
    )
    assert not dialog.scope.isVisible()
    dialog.open_button.click()
    dialog.reveal_button.click()
    assert opened == [("open", source.path), ("reveal", source.path)]
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert not dialog.isVisible()


def test_an_index_that_cannot_be_read_is_said(qtbot, indexed, tmp_path: Path) -> None:
    _base, source = indexed
    gone = SourceView(**{**source.__dict__, "path": str(tmp_path / "moved.pdf"), "page": None})
    dialog = _open_from_row(qtbot, IndexKnowledge(tmp_path / "none.db"), gone)
    assert dialog.notice.text().startswith("There is no knowledge index")
    assert not dialog.open_button.isEnabled() and dialog.text.toPlainText() == source.text


def test_the_mark_counts_as_qt_does(qtbot, indexed) -> None:
    """Qt counts a character beyond the BMP (an emoji) as two positions, Python as one."""
    _base, source = indexed
    before = "🌊 Tides 🌊 rise.\n" * 40
    text = f"{before}turn{before}"
    dialog = SourceDialog(source, ExcerptContext(text, len(before), len(before) + 4, before=True))
    qtbot.addWidget(dialog)
    (selection,) = dialog.text.extraSelections()
    assert dialog.marked_span() == (len(before) + 80, len(before) + 84)
    dialog.show()
    qtbot.waitExposed(dialog)
    middle = dialog.text.cursorRect().center().y()  # a short excerpt: in the middle of the view
    assert abs(middle - dialog.text.viewport().height() / 2) < dialog.text.fontMetrics().height()
    assert selection.cursor.selectedText() == "turn"
    assert dialog.scope.text() == (
        "The text around the excerpt as the knowledge index holds it (the document goes on "
        "before); the excerpt the reply read is marked."
    )
