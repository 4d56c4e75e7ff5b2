"""The message box under the chat: Enter sends, Shift+Enter breaks the line, Esc stops.

It knows three things about the outside world, all set by the window: whether a reply is being
generated (the button becomes Stop), why sending is impossible right now (the model is loading),
and how many tokens the prompt will take against the context window.

Files and images come in through the paperclip button, or pasted or dropped onto the box (a
screenshot pasted from the clipboard as PNG bytes): the composer only asks for them
(`attachRequested`, `imagePasted`); the window has them read and kept and hands each back with
`add_attachment` or `add_image`, shown as a removable chip until the message is sent. With a
model that cannot see images, sending a draft that has some is refused, saying why.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QMimeData, Qt, Signal, Slot
from PySide6.QtGui import QImage, QKeyEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.chat.image_attach import IMAGE_SUFFIXES
from ui.chat.draft_attachments import DraftAttachments
from ui.chat.image_files import png_data
from ui.chat.knowledge_button import KnowledgeButton
from ui.chat.reply_progress import STOPPING
from ui.chat.think_controls import ThinkControls
from ui.chat.token_notice import KNOWLEDGE_TIP, TOKENS_TIP, blocks_sending, context_notice
from ui.chat.tools_button import ToolsButton
from ui.text.plain_text import literal, plain_label
from ui.widgets.auto_height import fit_to_text
from ui.widgets.icon_button import icon_button
from ui.widgets.icons import ColorRole, themed_icon
from ui.widgets.theme import em, scale_font
from ui.widgets.view_models import ImageView

_MAX_VISIBLE_LINES = 8
# The paperclip's file dialog: what `app.generation.attachments` reads as text, and the images
# `app.images.store` keeps.
_IMAGE_PATTERNS = " ".join(f"*{suffix}" for suffix in sorted(IMAGE_SUFFIXES))
IMAGE_FILES = f"Images ({_IMAGE_PATTERNS})"
ATTACHABLE_FILES = (
    "Text, code, PDF and images (*.txt *.md *.markdown *.csv *.tsv *.json *.py *.js *.ts *.c"
    " *.h *.cpp *.hpp *.rs *.go *.java *.sh *.html *.css *.sql *.yaml *.yml *.toml *.xml *.log"
    f" *.pdf {_IMAGE_PATTERNS});;{IMAGE_FILES};;All files (*)"
)


def local_files(mime: QMimeData) -> list[str]:
    """The local files a paste or a drop carries (none for text or web links)."""
    if not mime.hasUrls():
        return []
    return [url.toLocalFile() for url in mime.urls() if url.isLocalFile()]


class ComposerEdit(QPlainTextEdit):
    submitted = Signal()
    escapePressed = Signal()
    filesPasted = Signal(list)  # local file paths pasted or dropped onto the box
    imagePasted = Signal(bytes)  # a picture pasted from the clipboard, as PNG

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return (
            bool(local_files(source)) or source.hasImage() or super().canInsertFromMimeData(source)
        )

    def insertFromMimeData(self, source: QMimeData) -> None:
        # Pasting or dropping a file attaches it, rather than typing its path. A picture on the
        # clipboard (a screenshot, a browser's "Copy image", which adds only HTML) is attached;
        # with plain text beside it (cells copied from a spreadsheet come with a picture of
        # them) the text is what was meant.
        files = local_files(source)
        picture = source.hasImage() and not files and not source.hasText()
        image = QImage(source.imageData()) if picture else QImage()
        if files:
            self.filesPasted.emit(files)
        elif not image.isNull():
            self.imagePasted.emit(png_data(image))
        else:
            super().insertFromMimeData(source)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                # A real paragraph break, not the line separator Qt inserts for Shift+Enter.
                self.textCursor().insertText("\n")
            else:
                self.submitted.emit()
            return
        if key == Qt.Key.Key_Escape:
            self.escapePressed.emit()
            return
        super().keyPressEvent(event)


class Composer(QFrame):
    """`sendRequested(text)` clears the box; if the window cannot send it, `set_text` puts the
    draft back. `draftChanged(text)` fires on every edit, for counting tokens."""

    sendRequested = Signal(str)
    stopRequested = Signal()
    draftChanged = Signal(str)
    attachRequested = Signal(list)  # file paths to read and attach
    imagePasted = Signal(bytes)  # a pasted picture's PNG bytes, to keep and attach

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Composer")
        self._generating = False
        self._reason: str | None = None
        self._over_context = False
        self._token_notice = ("", "")
        self._button_stops: bool | None = None
        self._stopping = False  # Stop was pressed; the worker has not confirmed yet

        self.notice = plain_label()  # may quote an error from the worker
        self.notice.setObjectName("ComposerNotice")
        self.notice.setWordWrap(True)
        self.notice.hide()

        self.edit = ComposerEdit()
        self.edit.setObjectName("ComposerEdit")
        self.edit.setPlaceholderText("Message Branchwise…")
        self.edit.setAccessibleName("Message")
        self.edit.setToolTip("Enter sends · Shift+Enter adds a line · Esc stops the reply")
        self.edit.setFrameShape(QFrame.Shape.NoFrame)
        self.edit.setTabChangesFocus(True)

        self._send_icon = themed_icon("send", ColorRole.BrightText, ColorRole.BrightText)
        self._stop_icon = themed_icon("stop", ColorRole.BrightText, ColorRole.BrightText)
        self.button = QToolButton()
        self.button.setObjectName("SendButton")
        self.button.setCursor(Qt.CursorShape.PointingHandCursor)
        size = em(self, 2.3)
        self.button.setFixedSize(size, size)
        self.button.setIconSize(self.button.size() * 0.5)

        self.token_label = QLabel()
        self.token_label.setObjectName("TokenLabel")
        self.token_label.setAccessibleName("Prompt size")
        scale_font(self.token_label, 0.85)
        self.token_label.setToolTip(TOKENS_TIP)
        self.token_label.hide()

        self.attach_button = icon_button(
            "paperclip",
            "Attach files",
            "Attach images, or text, Markdown, code, CSV, JSON or PDF files",
            "AttachButton",
        )
        self.attached = DraftAttachments()
        self.think = ThinkControls()
        self.tools = ToolsButton()  # which tools this chat may use (ui.window.tool_features)
        self.knowledge = KnowledgeButton()  # what it reads (ui.window.knowledge_features)

        box = QFrame()
        box.setObjectName("ComposerBox")
        row = QHBoxLayout(box)
        row.setContentsMargins(em(self, 0.8), em(self, 0.5), em(self, 0.5), em(self, 0.5))
        row.addWidget(self.attach_button, 0, Qt.AlignmentFlag.AlignBottom)
        row.addWidget(self.edit, 1)
        row.addWidget(self.button, 0, Qt.AlignmentFlag.AlignBottom)
        self._row = row
        self._footer = QHBoxLayout()
        self._footer.setContentsMargins(0, 0, 0, 0)
        self._footer.addWidget(self.think)
        self._footer.addWidget(self.tools)
        self._footer.addWidget(self.knowledge)
        self._footer.addStretch(1)
        self._footer.addWidget(self.token_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(em(self, 0.3))
        layout.addWidget(self.notice)
        layout.addWidget(self.attached)
        layout.addWidget(box)
        layout.addLayout(self._footer)
        self.attach_button.clicked.connect(self.choose_files)
        self.edit.filesPasted.connect(self.attachRequested)
        self.edit.imagePasted.connect(self.imagePasted)
        self.attached.changed.connect(self._attachments_changed)

        self.edit.submitted.connect(self.send)
        self.edit.escapePressed.connect(self._on_escape)
        self.edit.textChanged.connect(self._on_text_changed)
        self.button.clicked.connect(self._on_button)
        fit_to_text(self.edit, 1, _MAX_VISIBLE_LINES)
        self._refresh()

    # -- state set by the window ---------------------------------------------------------

    def set_generating(self, generating: bool) -> None:
        self._generating = generating
        self._stopping = False
        self._refresh()

    def set_stopping(self) -> None:
        """Stop was asked for: the button waits, disabled, until generating ends."""
        self._stopping = True
        self._refresh_button()

    def set_enabled_reason(self, reason: str | None) -> None:
        """None enables the composer; a reason disables it and says why (e.g. model loading)."""
        self._reason = reason
        self._refresh()

    def set_token_info(
        self,
        count: int | None,
        context_length: int | None,
        overflow: str | None = None,
        knowledge: int = 0,
    ) -> None:
        """Show the prompt's size (and the most its `knowledge` excerpts may add); near or over
        the context window, say what will happen under the chat's `overflow` policy (sending is
        blocked over the context only when the policy leaves nothing out)."""
        self._over_context = blocks_sending(count, context_length, overflow)
        if count is None or not context_length:
            self._token_notice = ("", "")
            self.token_label.hide()
        else:
            self._token_notice = context_notice(count, context_length, overflow)
            shown = f"{count:,} + up to {knowledge:,}" if knowledge else f"{count:,}"
            self.token_label.setText(f"{shown} / {context_length:,} tokens")
            self.token_label.setToolTip(KNOWLEDGE_TIP if knowledge else TOKENS_TIP)
            self.token_label.setProperty("kind", self._token_notice[0])
            self._repolish(self.token_label)
            self.token_label.show()
        self._refresh()

    def add_to_footer(self, widget: QWidget) -> None:
        """Put `widget` first in the row under the box (the window's model picker)."""
        self._footer.insertWidget(0, widget)

    def add_beside_send(self, widget: QWidget) -> None:
        """Put `widget` just before the send button (the window's Compare with…)."""
        self._row.insertWidget(
            self._row.indexOf(self.button), widget, 0, Qt.AlignmentFlag.AlignBottom
        )

    def text(self) -> str:
        return self.edit.toPlainText()

    def set_text(self, text: str) -> None:
        """Put a draft back, e.g. when the window could not send it."""
        self.edit.setPlainText(text)
        self.edit.moveCursor(self.edit.textCursor().MoveOperation.End)

    def attachments(self) -> list[dict[str, Any]]:
        """What is attached to the draft, as the store keeps it: images, then files."""
        return self.attached.records()

    def add_attachment(self, attachment: dict[str, Any]) -> None:
        """A file read for the draft: {"name", "size", "tokens", "text"}."""
        self.attached.add_file(attachment)

    def add_image(self, view: ImageView) -> None:
        """An image kept for the draft, as its chip shows it."""
        self.attached.add_image(view)

    def set_model_sight(self, blind: str, refusal: str) -> None:
        """Whether the loaded model sees images: see `DraftAttachments.set_model_sight`."""
        self.attached.set_model_sight(blind, refusal)

    def clear_attachments(self) -> None:
        """After the message went: its files went with it."""
        self.attached.clear()

    @Slot()
    def _attachments_changed(self) -> None:
        self._refresh()  # images may make the draft one the model cannot take
        self.draftChanged.emit(self.edit.toPlainText())  # the token count includes them

    @Slot()
    def choose_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Attach files", "", ATTACHABLE_FILES)
        if paths:
            self.attachRequested.emit(paths)

    def _has_content(self, text: str) -> bool:
        """Text, or a picture alone ("what is this?" is often all a picture needs)."""
        return bool(text) or bool(self.attached.image_views())

    @property
    def can_send(self) -> bool:
        return not (self._generating or self._reason or self._over_context or self.attached.refusal)

    # -- actions -----------------------------------------------------------------------------

    @Slot()
    def send(self) -> None:
        text = self.edit.toPlainText().strip()
        if not self._has_content(text) or not self.can_send:
            return
        self.edit.clear()
        self.sendRequested.emit(text)

    @Slot()
    def _on_escape(self) -> None:
        if self._generating:
            self.stopRequested.emit()

    @Slot()
    def _on_button(self) -> None:
        if self._generating:
            self.stopRequested.emit()
        else:
            self.send()

    @Slot()
    def _on_text_changed(self) -> None:
        fit_to_text(self.edit, 1, _MAX_VISIBLE_LINES)
        self._refresh_button()
        self.draftChanged.emit(self.edit.toPlainText())

    # -- presentation ------------------------------------------------------------------------

    def _refresh(self) -> None:
        self.edit.setEnabled(self._reason is None)
        refusal = self.attached.refusal
        kind, text = (
            ("info", self._reason)
            if self._reason
            else ("danger", refusal)
            if refusal
            else self._token_notice
        )
        self.notice.setText(text)
        self.notice.setAccessibleName(text or "Composer notice")
        self.notice.setProperty("kind", kind)
        self._repolish(self.notice)
        self.notice.setVisible(bool(text))
        self._refresh_button()

    def _refresh_button(self) -> None:
        # Runs on every keystroke: only the enabled state may change then.
        button = self.button
        if self._generating:
            button.setEnabled(not self._stopping)
        else:
            button.setEnabled(self.can_send and self._has_content(self.edit.toPlainText().strip()))
        button.setToolTip(
            STOPPING
            if self._stopping
            else "Stop generating (Esc)"
            if self._generating
            else literal(self._reason or self.attached.refusal or "Send message (Enter)")
        )
        if self._button_stops is not self._generating:
            self._button_stops = self._generating
            button.setIcon(self._stop_icon if self._generating else self._send_icon)
            button.setAccessibleName("Stop generating" if self._generating else "Send message")

    @staticmethod
    def _repolish(widget: QLabel) -> None:
        widget.style().unpolish(widget)
        widget.style().polish(widget)
