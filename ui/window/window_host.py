"""What the window's helpers may ask of the window, as small protocols.

Each helper (branch commands, sidebar commands, the stream presenter…) is given the window but
types it by the protocol of exactly what it uses, declared here, so no helper imports
`MainWindow` and the window's module is the only one that knows them all. That the window fills
each of them is checked by the type checker (`tests/test_protocols.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QMenuBar, QStatusBar, QWidget

    from app.chat.controller import ChatController
    from app.store.conversations import Conversation, Store
    from ui.chat.chat_view import ChatView
    from ui.chat.composer import Composer
    from ui.chat.notice_banner import NoticeBanner


class WindowWidget(Protocol):
    """The window as a widget, through `QWidget.window()` (a top-level window is its own): the
    QObject parent of each helper, and the parent of the dialogs it opens. A protocol cannot say
    "is a QWidget", so a helper reaches the widget through this."""

    def window(self) -> QWidget: ...


class ChatWindow(WindowWidget, Protocol):
    """The open conversation and the controller: what nearly every helper needs."""

    controller: ChatController
    store: Store

    @property
    def current_conversation_id(self) -> int | None: ...

    def open_conversation(self, conversation_id: int) -> None: ...

    def new_chat(self) -> None: ...

    def show_notice(self, text: str) -> None: ...


class ChatPane(ChatWindow, Protocol):
    """The chat window with the widgets of its chat pane."""

    chat_view: ChatView
    composer: Composer
    banner: NoticeBanner

    def statusBar(self) -> QStatusBar: ...


class MenuWindow(Protocol):
    """A window that takes shortcuts and has a menu bar (as QMainWindow)."""

    def addAction(self, action: QAction, /) -> None: ...

    def menuBar(self) -> QMenuBar: ...


class ConversationList(ChatPane, Protocol):
    """What the sidebar's commands change besides the chat pane."""

    def close_conversation(self) -> None: ...

    def is_empty(self, conversation_id: int) -> bool: ...

    def show_conversation_title(self, conversation: Conversation) -> None: ...
