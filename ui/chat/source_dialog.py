"""A reply's source read where it stands: the excerpt marked in its page (a PDF's) or in the text
around it, as the knowledge index holds it, scrolled into view. Read-only, in the app: no portable
way asks another program to open a file at a page. *Open* and *Reveal* reach the file as the
sources panel's do; Esc or Close shuts it.

The text comes from a person's documents: shown as plain text (a QPlainTextEdit, which renders no
markup, follows no link and loads nothing), the excerpt marked by an extra selection over it.
When the index no longer holds the text the reply read (the file changed since, or it is gone,
or the index cannot be read) the excerpt the message kept is shown instead, with a line saying
why.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QShowEvent, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.knowledge.context import ExcerptContext, ExcerptPlace, MissingContext
from ui.text.plain_text import menu_text, plain_label
from ui.widgets.file_places import open_file, reveal_file
from ui.widgets.theme import colors_for, em, is_dark, scale_font
from ui.widgets.view_models import SourceView

_LINES_BEFORE = 3  # shown above a long excerpt's start
_KEPT = "Shown is the excerpt as this reply read it."
_MISSING = {
    MissingContext.CHANGED: "The file has changed since this reply read it, so its page may "
    "differ now.",
    MissingContext.GONE: "The knowledge no longer holds this file, so the text around the "
    "excerpt cannot be shown.",
    MissingContext.FOLDER_GONE: "This knowledge folder has been removed, so the text around the "
    "excerpt cannot be shown.",
    MissingContext.NO_INDEX: "There is no knowledge index to read the text around the excerpt "
    "from.",
    MissingContext.INCOMPLETE: "The knowledge index does not hold the whole text around this "
    "excerpt.",
}


def show_tip(source: SourceView) -> str:
    """The tooltip of a source's Show button."""
    where = "page" if source.page is not None else "document"
    return f"Show this excerpt in its {where}"


def place_of(source: SourceView) -> ExcerptPlace:
    """Where the index finds a source's excerpt again."""
    return ExcerptPlace(
        source.collection, source.path, source.page, source.start, source.end,
        source.document_sha256,
    )  # fmt: skip


def notice_of(context: ExcerptContext) -> str:
    """Why the page is not shown ("" when it is)."""
    missing = context.missing
    if missing is None:
        return ""
    if missing is MissingContext.UNREADABLE:
        return f"The knowledge index could not be read: {context.detail.rstrip('.')}. {_KEPT}"
    return f"{_MISSING[missing]} {_KEPT}"


def scope_of(source: SourceView, context: ExcerptContext) -> str:
    """What the text shown is, under the header."""
    if context.missing is not None:
        return ""
    if context.whole_page:
        text = f"Page {source.page} as the knowledge index holds it (its text, not its layout)"
    else:
        text = "The text around the excerpt as the knowledge index holds it"
        sides = (("before", context.before), ("after", context.after))
        goes_on = [side for side, more in sides if more]
        if goes_on:
            text += f" (the document goes on {' and '.join(goes_on)})"
    return f"{text}; the excerpt the reply read is marked."


def utf16_offset(text: str, index: int) -> int:
    """A Python string index as a position in a Qt document, which counts UTF-16 code units."""
    return len(text[:index].encode("utf-16-le")) // 2


class SourceDialog(QDialog):
    def __init__(
        self, source: SourceView, context: ExcerptContext, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.source, self.context = source, context
        name = Path(source.path).name
        self.setObjectName("SourceDialog")
        self.setWindowTitle(f"[{source.number}] {name}")
        self.setAccessibleName(f"Source {source.number}, {name}")
        title = plain_label(name, self)
        title.setObjectName("SourceDialogTitle")
        title.setWordWrap(True)
        scale_font(title, 1.15, bold=True)
        facts = [f"Page {source.page}"] if source.page is not None else []
        facts += [source.heading] if source.heading else []
        self.facts = plain_label(" · ".join([*facts, source.collection]), self)
        self.facts.setObjectName("SourceDialogFacts")
        self.facts.setWordWrap(True)
        self.scope = self._line("SourceDialogScope", scope_of(source, context))
        scale_font(self.scope, 0.92)
        self.notice = self._line("SourceDialogNotice", notice_of(context))
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("SourceDialogText")
        self.text.setAccessibleName(f"The text of {name}")
        self.text.setReadOnly(True)
        self.text.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.text.setPlainText(context.text if context.missing is None else source.text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        found = Path(source.path).exists()
        self.open_button = self._button(buttons, "Open", "Open the file", found)
        self.reveal_button = self._button(buttons, "Reveal", "Show the file in its folder", found)
        self.open_button.clicked.connect(lambda: open_file(source.path))
        self.reveal_button.clicked.connect(lambda: reveal_file(source.path))
        layout = QVBoxLayout(self)
        layout.setSpacing(em(self, 0.35))
        for widget in (title, self.facts, self.scope, self.notice):
            layout.addWidget(widget)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        self.resize(em(self, 48), em(self, 36))
        self._mark()

    def marked_span(self) -> tuple[int, int] | None:
        """The excerpt's span in the text shown, in the document's positions (None: unmarked)."""
        context = self.context
        if context.missing is not None:
            return None
        return utf16_offset(context.text, context.start), utf16_offset(context.text, context.end)

    def _line(self, name: str, text: str) -> QLabel:
        label = plain_label(text, self)
        label.setObjectName(name)
        label.setWordWrap(True)
        label.setVisible(bool(text))
        return label

    def _button(self, box: QDialogButtonBox, text: str, tip: str, found: bool) -> QPushButton:
        button = box.addButton(menu_text(text), QDialogButtonBox.ButtonRole.ActionRole)
        button.setAutoDefault(False)
        button.setEnabled(found)
        button.setToolTip(tip if found else "The file is no longer there.")
        return button

    def _mark(self) -> None:
        """The excerpt's background in the theme's mark colour, and the view scrolled to it."""
        span = self.marked_span()
        if span is None:
            self.text.setExtraSelections([])
            return
        selection = QTextEdit.ExtraSelection()
        cursor = QTextCursor(self.text.document())
        cursor.setPosition(span[0])
        cursor.setPosition(span[1], QTextCursor.MoveMode.KeepAnchor)
        selection.cursor = cursor
        colors = colors_for(is_dark())
        selection.format.setBackground(QColor(colors.mark))
        selection.format.setForeground(QColor(colors.text))
        self.text.setExtraSelections([selection])

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._scroll_to_mark()

    def _scroll_to_mark(self) -> None:
        """The excerpt in the middle of the view when it fits there, else its start near the top;
        the text cursor (for the keyboard) at its start."""
        span, text = self.marked_span(), self.text
        if span is None:
            return
        start, end = QTextCursor(text.document()), QTextCursor(text.document())
        start.setPosition(span[0])
        end.setPosition(span[1])
        height = text.cursorRect(end).bottom() - text.cursorRect(start).top()
        if height < text.viewport().height() * 0.8:
            middle = QTextCursor(text.document())
            middle.setPosition((span[0] + span[1]) // 2)
            text.setTextCursor(middle)
            text.centerCursor()
            text.setTextCursor(start)
            return
        # Longer than the view: from the bottom up to its start, which lands on the top line,
        # then a few lines (the scroll bar counts lines) of what comes before it.
        bar = text.verticalScrollBar()
        bar.setValue(bar.maximum())
        text.setTextCursor(start)
        text.ensureCursorVisible()
        bar.setValue(bar.value() - _LINES_BEFORE)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # the theme changed: its mark colour
            self._mark()
