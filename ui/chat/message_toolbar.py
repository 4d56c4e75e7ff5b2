"""The row under a message: its action buttons (copy and delete; edit on the person's messages
and on summaries; continue and regenerate on replies; summarise up to here), the `‹ n/m ›`
switcher once the message has versions, and a reply's (or summary's) stats line, each shown or
hidden to suit the message's state.

The message widget connects the buttons; this row only builds them and decides what shows.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from ui.chat.reply_stats import format_stats, stats_details
from ui.chat.sibling_nav import SiblingNav
from ui.widgets.icon_button import message_action
from ui.widgets.theme import em, scale_font
from ui.widgets.view_models import MessageView
from ui.widgets.visibility import set_shown

# A property a reply's Details button holds, so ui.window.replay_features finds it (its object
# name is the message actions' own, which the style sheet reads); likewise the Compare button
# of the person's messages, for ui.window.model_compare.
DETAILS_BUTTON = "replyDetails"
COMPARE_BUTTON = "compareModels"
# *Summarise up to Here*, on every message but a summary, for ui.window.compaction_features.
SUMMARISE_BUTTON = "summariseHere"


class MessageToolbar(QWidget):
    def __init__(self, role: str, parent: QWidget) -> None:
        """A toolbar for a message of `role`; sizes are in em of `parent`, the message."""
        super().__init__(parent)
        self.setObjectName("MessageToolbar")
        self._role = role
        self._tools = QHBoxLayout(self)
        self._tools.setContentsMargins(0, 0, 0, 0)
        self._tools.setSpacing(em(parent, 0.15))
        self.nav: SiblingNav | None = None
        self.edit_button: QToolButton | None = None
        self.regenerate_button: QToolButton | None = None
        self.continue_button: QToolButton | None = None
        self.delete_button: QToolButton | None = None
        self.details_button: QToolButton | None = None
        self.compare_button: QToolButton | None = None
        self.summarise_button: QToolButton | None = None
        self.stats_label: QLabel | None = None
        self.copy_button = message_action("copy", "Copy message")
        if role != "system":
            self.delete_button = message_action("trash", "Delete message and the replies below it")
        if role in ("user", "assistant"):
            self.summarise_button = message_action(
                "fold", "Summarise up to here: a new branch goes on from a summary of the chat"
            )
            self.summarise_button.setProperty(SUMMARISE_BUTTON, True)
        if role == "user":
            # Every role but "system" has a delete button; these two have a summarise one.
            assert self.delete_button is not None and self.summarise_button is not None
            self.edit_button = message_action("edit", "Edit message")
            self.compare_button = message_action("columns", "Compare with other models")
            self.compare_button.setProperty(COMPARE_BUTTON, True)
            self._tools.addStretch(1)
            self._tools.addWidget(self.copy_button)
            self._tools.addWidget(self.compare_button)
            self._tools.addWidget(self.edit_button)
            self._tools.addWidget(self.summarise_button)
            self._tools.addWidget(self.delete_button)
            return
        self._tools.addWidget(self.copy_button)
        if role == "summary":  # the person may write their own version of it
            self.edit_button = message_action("edit", "Edit summary: a new version beside it")
            self._tools.addWidget(self.edit_button)
        if role in ("assistant", "summary"):
            assert self.delete_button is not None  # every role but "system" has one
            if role == "assistant":
                self.regenerate_button = message_action("regenerate", "Regenerate reply")
                self.continue_button = message_action(
                    "chevron-right", "Continue: write more of this reply"
                )
                self.continue_button.setText("Continue")
                self.continue_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            self.details_button = message_action(
                "file-text",
                f"Details: where this {'reply' if role == 'assistant' else role} came from, "
                "and Replay",
            )
            self.details_button.setProperty(DETAILS_BUTTON, True)
            self.stats_label = QLabel()
            self.stats_label.setObjectName("StatsLabel")
            self.stats_label.setWordWrap(True)
            self.stats_label.setTextFormat(Qt.TextFormat.PlainText)  # an imported model label
            scale_font(self.stats_label, 0.85)
            self.stats_label.setAccessibleName("Reply statistics")
            self.stats_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            for button in (
                self.continue_button,
                self.regenerate_button,
                self.summarise_button,
                self.details_button,
                self.delete_button,
            ):
                if button is not None:
                    self._tools.addWidget(button)
            self._tools.addSpacing(em(parent, 0.5))
            self._tools.addWidget(self.stats_label, 1)
        # Takes the room only while the stats line is hidden (stretch 0 loses to 1).
        self._tools.addStretch(0)

    def add_nav(self) -> SiblingNav:
        """The `‹ n/m ›` switcher, made the first time a message has versions."""
        if self.nav is None:
            self.nav = SiblingNav(self)
            # After the stretch that right-aligns a user's toolbar, else first.
            self._tools.insertWidget(1 if self._role == "user" else 0, self.nav)
        return self.nav

    def action_buttons(self) -> list[QToolButton]:
        """The buttons that act on a finished message (hidden while it streams)."""
        buttons = (
            self.copy_button,
            self.compare_button,
            self.edit_button,
            self.regenerate_button,
            self.summarise_button,
            self.details_button,
            self.delete_button,
        )
        return [b for b in buttons if b is not None]

    def show_for(self, view: MessageView, editing: bool) -> None:
        """Show what suits `view`: nothing while it is edited; while a new version streams,
        only its switcher (the way back to the others); else the actions and the stats."""
        streaming = view.status == "streaming"
        set_shown(self, not editing and (not streaming or self.nav is not None))
        for button in self.action_buttons():
            set_shown(
                button, not streaming and (button is not self.copy_button or bool(view.content))
            )
        if self.continue_button is not None:
            set_shown(self.continue_button, can_continue(view))
        if self.stats_label is not None:
            stats_text = "" if streaming else format_stats(view.stats)
            tip = stats_details(view.stats)
            if not stats_text and view.model_label:
                # Imported: no stats of ours, only the model its app named (first, so a chat
                # whose versions came from several models still says where this one came from).
                stats_text = view.model_name or view.model_label
                tip = (
                    f"Written by {view.model_label} in the app it was imported from; "
                    "continuing uses your chosen local model"
                )
            elif not stats_text and view.kept_copy:
                stats_text = "kept word for word from the full chat"
                tip = "A turn the summary keeps as it was: the full chat has the original"
            elif view.model_name and not streaming:
                # Its versions were written by several models: say which wrote this one.
                stats_text = " · ".join(p for p in (view.model_name, stats_text) if p)
                tip = f"Written by {view.model_name}\n{tip}"
            self.stats_label.setText(stats_text)
            self.stats_label.setToolTip(tip)
            set_shown(self.stats_label, bool(stats_text))


def can_continue(view: MessageView) -> bool:
    """A reply with text that was stopped, or cut off by its length limit or the context."""
    cut_off = view.stats.get("finish_reason") in ("length", "context")
    return bool(view.content) and (view.status == "stopped" or cut_off)
