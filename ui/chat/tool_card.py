"""The card under a reply that called a tool, inline in the chat (never a modal): it asks before
the call runs, shows it running with Cancel, or says the reply reached its call limit.

Asking shows which server and tool, what the tool says it does (and what it said when it was
last approved, if that changed), and the arguments, editable as JSON; *Run* is the default
button, *Deny* refuses, and the two "Always" choices remember the answer for this tool (tied to
its description). Everything shown came from a model or a server: plain text only.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QElapsedTimer, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.chat.tools.payloads import ToolCallCard, ToolWait
from ui.chat.tool_names import server_text
from ui.text.plain_text import menu_text, plain_label
from ui.widgets.auto_height import fit_to_text
from ui.widgets.theme import em, scale_font

_MAX_ARGUMENT_LINES = 12


class ToolCard(QFrame):
    # The arguments as run (the person may have edited them) and what to remember:
    # "" (ask again next time), "chat" or "tool".
    runRequested = Signal(object, str)
    denyRequested = Signal()
    cancelRequested = Signal()
    continueRequested = Signal()  # past the call limit
    stopRequested = Signal()  # at the call limit: end the reply here

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ToolCard")
        self.setAccessibleName("Tool call")
        # As tall as its content, like the messages above it (the chat's spare room is not its).
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.state: ToolWait | None = None
        self._call_id: str | None = None
        self.title = plain_label()
        self.title.setObjectName("ToolCardTitle")
        scale_font(self.title, 1.0, bold=True)
        self.title.setWordWrap(True)
        self.description = plain_label()
        self.description.setObjectName("ToolCardDescription")
        self.description.setWordWrap(True)
        self.changed = plain_label()
        self.changed.setObjectName("ToolCardChanged")
        self.changed.setWordWrap(True)
        self.arguments = QPlainTextEdit()
        self.arguments.setObjectName("ToolArguments")
        self.arguments.setAccessibleName("Arguments (JSON)")
        self.arguments.setTabChangesFocus(True)
        self.arguments.document().documentLayout().documentSizeChanged.connect(self._fit_arguments)
        self.arguments.textChanged.connect(self._check_arguments)
        self.problem = plain_label()
        self.problem.setObjectName("ToolCardProblem")
        self.run_button = self._button("Run", "PrimaryButton")
        self.deny_button = self._button("Deny")
        self.always_chat = self._button("Always for this tool in this chat")
        self.always_tool = self._button("Always for this tool")
        self.cancel_button = self._button("Cancel")
        self.continue_button = self._button("Continue", "PrimaryButton")
        self.stop_button = self._button("Stop here")
        self.run_button.clicked.connect(lambda: self._run(""))
        self.always_chat.clicked.connect(lambda: self._run("chat"))
        self.always_tool.clicked.connect(lambda: self._run("tool"))
        self.deny_button.clicked.connect(self.denyRequested)
        self.cancel_button.clicked.connect(self.cancelRequested)
        self.continue_button.clicked.connect(self.continueRequested)
        self.stop_button.clicked.connect(self.stopRequested)
        buttons = QHBoxLayout()
        buttons.setSpacing(em(self, 0.4))
        for button in (
            self.run_button,
            self.deny_button,
            self.cancel_button,
            self.continue_button,
            self.stop_button,
        ):
            buttons.addWidget(button)
        buttons.addStretch(1)
        for button in (self.always_chat, self.always_tool):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        pad = em(self, 0.7)
        layout.setContentsMargins(pad, pad, pad, pad)
        layout.setSpacing(em(self, 0.4))
        for widget in (self.title, self.description, self.changed, self.arguments, self.problem):
            layout.addWidget(widget)
        layout.addLayout(buttons)
        self._elapsed = QElapsedTimer()
        self._tick = QTimer(self)
        self._tick.setInterval(200)
        self._tick.timeout.connect(self._show_elapsed)
        self._running_title = ""
        self.hide()

    @property
    def call_id(self) -> str | None:
        return self._call_id

    def ask(self, call: ToolCallCard) -> None:
        """Ask before running `call`."""
        title = f"Run {call.tool} from {server_text(call.server)}?"
        self._show_call(ToolWait.APPROVAL, call, title)
        self.arguments.setReadOnly(False)
        self.arguments.setPlainText(json.dumps(call.arguments, ensure_ascii=False, indent=2))
        notes = []
        if call.repeated:
            notes.append(
                "The model already made this same call, with these arguments, since "
                "your last message; its result is above."
            )
        if before := call.changed_from:
            notes.append(
                "This tool's description changed since you allowed it; it used to say: " + before
            )
        self.changed.setText("\n".join(notes))
        self.changed.setVisible(bool(notes))
        self.run_button.setDefault(True)
        self.run_button.setFocus()

    def show_running(self, call: ToolCallCard) -> None:
        self._show_call(ToolWait.RUNNING, call, "")
        self._running_title = f"Running {call.tool} on {server_text(call.server)}"
        self.arguments.setReadOnly(True)
        self.arguments.setPlainText(json.dumps(call.arguments, ensure_ascii=False, indent=2))
        self.changed.hide()
        self._elapsed.start()
        self._show_elapsed()
        self._tick.start()

    def show_limit(self, count: int, limit: int) -> None:
        """The reply made `count` calls, the most one reply may make before asking."""
        self._set_state(ToolWait.LIMIT)
        self._call_id = None
        self.title.setText(f"This reply has made {count} tool calls (the limit is {limit}).")
        self.description.setText("Continue lets it make more; Stop here ends the reply.")
        for widget in (self.changed, self.arguments, self.problem):
            widget.hide()
        self.show()

    def clear(self) -> None:
        self._tick.stop()
        self._set_state(None)
        self._call_id = None
        self.hide()

    def _show_call(self, state: ToolWait, call: ToolCallCard, title: str) -> None:
        self._tick.stop()
        self._set_state(state)
        self._call_id = call.call_id
        self.title.setText(title)
        self.description.setText(call.description or "(The tool gives no description.)")
        self.description.show()
        self.arguments.show()
        self.problem.hide()
        self.show()

    def _set_state(self, state: ToolWait | None) -> None:
        self.state = state
        asking = state is ToolWait.APPROVAL
        for button in (self.run_button, self.deny_button, self.always_chat, self.always_tool):
            button.setVisible(asking)
        self.cancel_button.setVisible(state is ToolWait.RUNNING)
        self.continue_button.setVisible(state is ToolWait.LIMIT)
        self.stop_button.setVisible(state is ToolWait.LIMIT)
        self.setProperty("state", "" if state is None else state.value)  # theme.qss reads it
        self.style().unpolish(self)
        self.style().polish(self)

    def _show_elapsed(self) -> None:
        seconds = self._elapsed.elapsed() / 1000
        self.title.setText(f"{self._running_title}… {seconds:.1f} s")

    def _run(self, remember: str) -> None:
        arguments = self._parsed_arguments()
        if isinstance(arguments, dict):
            self.runRequested.emit(arguments, remember)

    def _parsed_arguments(self) -> dict[str, Any] | str:
        """The edited arguments, or why they cannot be run."""
        try:
            value = json.loads(self.arguments.toPlainText() or "{}")
        except ValueError as exc:
            return f"The arguments are not valid JSON: {exc}"
        if not isinstance(value, dict):
            return "The arguments must be a JSON object ({…})."
        return value

    def _check_arguments(self) -> None:
        if self.state is not ToolWait.APPROVAL:
            return
        problem = self._parsed_arguments()
        bad = isinstance(problem, str)
        self.problem.setText(problem if bad else "")
        self.problem.setVisible(bad)
        for button in (self.run_button, self.always_chat, self.always_tool):
            button.setEnabled(not bad)

    def _fit_arguments(self) -> None:
        fit_to_text(self.arguments, 2, _MAX_ARGUMENT_LINES)

    def _button(self, text: str, name: str = "ToolCardButton") -> QPushButton:
        button = QPushButton(menu_text(text))
        button.setObjectName(name)
        button.setAccessibleName(text)
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        button.setAutoDefault(False)
        return button
