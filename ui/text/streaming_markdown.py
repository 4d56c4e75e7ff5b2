"""A reply's Markdown while it streams, rendered so that an update costs the same at the end of
a long reply as at its start.

The finished blocks are rendered once, each chunk into its own browser placed before the live
one in the same layout; only the unfinished rest is rendered again on each update.
"""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout

from ui.text.markdown_render import stable_prefix_end
from ui.text.safe_browser import SafeBrowser

# Finished blocks are set aside in chunks of at least this many characters.
_FREEZE_CHARS = 600


class StreamingMarkdown:
    """Renders Markdown into `body` (which sits in `layout`), streaming or not."""

    def __init__(self, body: SafeBrowser, layout: QVBoxLayout) -> None:
        self._body = body
        self._layout = layout
        self._frozen: list[SafeBrowser] = []  # the finished part of the reply
        self._frozen_text = ""  # and its source

    def render(self, text: str, dark: bool, streaming: bool, citations: int = 0) -> None:
        """`citations`: the reply's sources, whose [N] become links (`body.sourceClicked`)."""
        if citations != self._body.citations:
            self.drop_frozen()
            self._body.citations = citations
        if streaming:
            self._render_streaming(text, dark)
        else:
            self.drop_frozen()
            self._body.set_markdown(text, dark)

    @property
    def shown_text(self) -> str:
        """The text on screen, across the finished browsers and the live one."""
        browsers = [*self._frozen, self._body]
        return "\n".join(b.toPlainText() for b in browsers if b.toPlainText())

    def drop_frozen(self) -> None:
        """Forget the finished browsers, e.g. before rendering in other colours."""
        for segment in self._frozen:
            segment.hide()
            segment.setParent(None)
            segment.deleteLater()
        self._frozen = []
        self._frozen_text = ""

    def _render_streaming(self, text: str, dark: bool) -> None:
        if not text.startswith(self._frozen_text):
            self.drop_frozen()
        done = len(self._frozen_text)
        cut = stable_prefix_end(text, done, _FREEZE_CHARS)
        if cut > done:
            segment = SafeBrowser(self._layout.parentWidget())
            segment.setObjectName("MessageBody")
            segment.setAccessibleName(self._body.accessibleName())
            segment.citations = self._body.citations
            segment.sourceClicked.connect(self._body.sourceClicked)
            segment.set_markdown(text[done:cut], dark)
            self._layout.insertWidget(self._layout.indexOf(self._body), segment)
            self._frozen.append(segment)
            self._frozen_text = text[:cut]
        self._body.set_markdown(text[len(self._frozen_text) :], dark, streaming=True)
