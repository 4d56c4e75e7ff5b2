"""Compaction in the window (`app.compaction`): *Summarise up to Here* on each message,
"Summarise the Chat" in the Chat menu (as `/compact` in the message box), *Compare with the
Full Chat* on a reply of a compacted branch, and the notices: a branch made (with the way back
to the full chat), a chat at its threshold (with the offer to summarise), and the answers with
and without the summary side by side."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QToolButton

from app.compaction.events import BranchCompacted, BranchComparison, SummaryProposal
from app.store.conversations import StoreError
from ui.chat.message_toolbar import SUMMARISE_BUTTON
from ui.chat.message_widget import MessageWidget
from ui.chat.sibling_diff import SiblingDiffDialog
from ui.window.window_host import ChatPane, MenuWindow

if TYPE_CHECKING:
    from app.store.records import Message

COMPARE_TEXT = "Compare with the Full Chat"


class CompactionHost(ChatPane, MenuWindow, Protocol):
    """The window as compaction uses it."""


def compacted_text(made: BranchCompacted) -> str:
    """What the notice says once a compacted branch is made."""
    tokens = f" ({made.stands_for:,} tokens)" if made.stands_for is not None else ""
    kept = f"; the last {made.kept} messages are kept word for word" if made.kept else ""
    answered = " Your message is answered there." if made.automatic else ""
    return (
        f"Summarised {made.covered} earlier messages{tokens} into a new branch{kept}. The full "
        f"chat is kept: ‹ › on the summary steps back to it.{answered}"
    )


def proposal_text(proposal: SummaryProposal) -> str:
    share = proposal.used / proposal.context
    return (
        f"This chat takes {share:.0%} of its {proposal.context:,}-token context. Summarise older "
        "turns into a new branch and go on there? The full chat stays one click away."
    )


def answer_label(where: str, reply: Message) -> str:
    """A column's heading: where the answer was written, and what its prompt cost."""
    stats = reply.stats
    if "prompt_tokens" not in stats:
        return where
    prompt, cached = int(stats["prompt_tokens"]), int(stats.get("cached_tokens", 0))
    return f"{where} · {prompt:,}-token prompt, {cached:,} reused from cache"


class CompactionFeatures(QObject):
    def __init__(self, window: CompactionHost) -> None:
        super().__init__(window.window())
        self._window = window
        self._compaction = window.controller.compaction
        self.diff: SiblingDiffDialog | None = None
        self.summarise_action = QAction("Su&mmarise the Chat", window.window())
        self.summarise_action.setShortcut(QKeySequence("Ctrl+Alt+S"))
        self.summarise_action.setToolTip(
            "A new branch that goes on from a summary of this one (as /compact does); the full "
            "chat is kept"
        )
        self.summarise_action.triggered.connect(self.summarise_chat)
        window.addAction(self.summarise_action)
        for action in window.menuBar().actions():
            menu = action.menu()
            if action.text().replace("&", "") == "Chat" and isinstance(menu, QMenu):
                menu.addAction(self.summarise_action)
        window.chat_view.messageWidgetCreated.connect(self._attach)
        self._compaction.compacted.connect(self._on_compacted)
        self._compaction.proposed.connect(self._on_proposed)
        self._compaction.compared.connect(self._on_compared)

    def summarise_chat(self) -> None:
        cid = self._window.current_conversation_id
        if cid is not None:
            self._compaction.compact(cid)

    @Slot(object)
    def _attach(self, widget: MessageWidget) -> None:
        for button in widget.findChildren(QToolButton):
            if button.property(SUMMARISE_BUTTON):
                button.clicked.connect(
                    lambda _=False, w=widget: self._compaction.summarise(int(w.view.id))
                )
        view, button = widget.view, widget.regenerate_button
        if view.role == "assistant" and view.compacted and button is not None:
            menu = button.menu()
            if not isinstance(menu, QMenu):
                menu = QMenu(button)
                button.setMenu(menu)
                button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
            menu.addSeparator()
            action = menu.addAction(COMPARE_TEXT)
            action.setToolTip("Ask the full chat the same question and show both answers")
            action.triggered.connect(
                lambda _=False, w=widget: self._compaction.compare_with_full_chat(int(w.view.id))
            )

    @Slot(object)
    def _on_compacted(self, made: BranchCompacted) -> None:
        if made.conversation_id != self._window.current_conversation_id:
            return
        self._window.banner.show_notice(
            compacted_text(made),
            "Show the Full Chat",
            lambda: self._show_full_chat(made.through),
        )

    @Slot(object)
    def _on_proposed(self, proposal: SummaryProposal) -> None:
        if proposal.conversation_id != self._window.current_conversation_id:
            return
        self._window.banner.show_notice(
            proposal_text(proposal),
            "Summarise Older Turns",
            lambda: self._summarise(proposal.conversation_id),
            sticky=True,
        )

    def _show_full_chat(self, message_id: int) -> None:
        self._window.controller.switch_to_message(message_id)

    def _summarise(self, conversation_id: int) -> None:
        self._compaction.compact(conversation_id)

    @Slot(object)
    def _on_compared(self, comparison: BranchComparison) -> None:
        store = self._window.store
        try:
            full, summarised = (
                store.get_message(comparison.full_chat),
                store.get_message(comparison.with_summary),
            )
        except StoreError as exc:
            self._window.show_notice(str(exc))
            return
        if self.diff is not None:
            self.diff.close()
        self.diff = SiblingDiffDialog(
            full.content,
            summarised.content,
            answer_label("The full chat", full),
            answer_label("With the summary", summarised),
            self._window.window(),
            title="With and Without the Summary",
        )
        self.diff.show()
