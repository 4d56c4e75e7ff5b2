"""The main window: the conversation sidebar beside the chat (header, messages, composer), the
status bar, the menus, and the wiring between these widgets and the chat controller.

The window holds no conversation state of its own beyond which conversation is open: it renders
the store's active path, turns the widgets' requests into controller intents, and re-renders
when the controller says something changed. While a reply streams, only that message is
re-rendered, at most `STREAM_FPS` times a second.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import QCloseEvent, QGuiApplication
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QSizePolicy,
    QSplitter,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.store import DEFAULT_TITLE, Message, StoreError
from ui.chat_view import ChatView
from ui.composer import Composer
from ui.conversation_files import ask_export_path, ask_import_path, read_import, write_export
from ui.conversation_views import conversation_rows, message_views, search_hits
from ui.draft_keeper import DraftKeeper
from ui.icons import themed_icon
from ui.message_widget import MessageWidget
from ui.notice_banner import NoticeBanner
from ui.sidebar import Sidebar
from ui.status_panel import StatusPanel
from ui.theme import THEME_MODES, ThemeMode, apply_theme, em
from ui.window_actions import build_actions, build_menus
from ui.window_models import WindowModels

# The dialogs are imported when first used: the window must be on screen fast.
if TYPE_CHECKING:
    from app.controller import ChatController
    from app.paths import AppPaths
    from app.settings import Preferences
    from ui.conversation_settings import ConversationSettingsDialog
    from ui.model_dialogs import ModelLibraryDialog
    from ui.preferences_dialog import PreferencesDialog

_log = logging.getLogger(__name__)

STREAM_FPS = 30
TOKEN_COUNT_DEBOUNCE_MS = 300
_TITLE_CHARS = 48
_COLUMN_EM = 48


def title_from(text: str) -> str:
    """A conversation title from its first message: the first line, shortened at a word."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), DEFAULT_TITLE)
    if len(line) <= _TITLE_CHARS:
        return line
    cut = line[:_TITLE_CHARS].rsplit(" ", 1)[0] or line[:_TITLE_CHARS]
    return cut.rstrip(" ,.;:") + "…"


class MainWindow(QMainWindow):
    def __init__(
        self,
        controller: ChatController,
        paths: AppPaths,
        preferences: Preferences,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("MainWindow")
        self.setWindowTitle("Branchwise")
        self.setAccessibleName("Branchwise")
        self.controller = controller
        self.store = controller.store
        self.paths = paths
        self.preferences = preferences
        self._cid: int | None = None
        self._stream: dict[str, Any] | None = None  # the latest streamed text, not yet shown
        self._streamed_text: dict[int, str] = {}  # message id -> text newer than the store's
        self._undo_delete: int | None = None
        self._closed = False

        self.sidebar = Sidebar()
        self.banner = NoticeBanner()
        self.chat_view = ChatView()
        self.composer = Composer()
        self.composer.setMaximumWidth(em(self.composer, _COLUMN_EM))
        self.drafts = DraftKeeper(self.composer, controller, self)
        self.status_panel = StatusPanel()
        self.models = WindowModels(
            controller, paths.models_dir, self, lambda: self._cid, self.show_notice
        )
        self.statusBar().addPermanentWidget(self.status_panel)
        self.statusBar().setSizeGripEnabled(False)
        self._build_layout()

        self.menu_actions = build_actions(self, self._action_slots())
        build_menus(self.menuBar(), self.menu_actions)
        self.menu_actions.themes[preferences.theme].setChecked(True)
        self.menu_actions.toggle_sidebar.setCheckable(True)
        self.menu_actions.toggle_sidebar.setChecked(True)

        self._stream_timer = QTimer(self, singleShot=True, interval=1000 // STREAM_FPS)
        self._stream_timer.timeout.connect(self._show_stream)
        self._count_timer = QTimer(self, singleShot=True, interval=TOKEN_COUNT_DEBOUNCE_MS)
        self._count_timer.timeout.connect(self._request_token_count)
        self._connect()
        self._set_busy(False)
        self._on_model_status(controller.last_model_status)
        self._default_size()

    # -- layout -----------------------------------------------------------------------------

    def _build_layout(self) -> None:
        self.sidebar_button = self._header_button(
            "panel-left", "Show or hide the conversation list (Ctrl+Shift+S)", "Toggle sidebar"
        )
        self.title_label = QLabel()
        self.title_label.setObjectName("ChatTitle")
        self.title_label.setAccessibleName("Conversation title")
        # A long title must not widen the window: it is cut to the room there is.
        self.title_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.settings_button = self._header_button(
            "sliders", "Model, system prompt and sampling for this conversation",
            "Conversation settings",
        )
        header = QWidget()
        header.setObjectName("ChatHeader")
        row = QHBoxLayout(header)
        row.setContentsMargins(em(self, 0.5), em(self, 0.3), em(self, 0.5), em(self, 0.3))
        row.addWidget(self.sidebar_button)
        row.addWidget(self.title_label, 1)
        row.addWidget(self.settings_button)

        composer_row = QHBoxLayout()
        composer_row.setContentsMargins(em(self, 1), 0, em(self, 1), em(self, 0.6))
        composer_row.addStretch(1)
        composer_row.addWidget(self.composer, 100)
        composer_row.addStretch(1)

        pane = QWidget()
        pane.setObjectName("ChatPane")
        column = QVBoxLayout(pane)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(header)
        column.addWidget(self.banner)
        column.addWidget(self.chat_view, 1)
        column.addLayout(composer_row)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("MainSplitter")
        self.splitter.setAccessibleName("Sidebar and chat")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setHandleWidth(1)
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(pane)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([em(self, 14), em(self, 38)])
        self.setCentralWidget(self.splitter)

    def _default_size(self) -> None:
        """A comfortable first size, never larger than the screen (restore_state may then
        put back the person's own)."""
        width, height = em(self, 78), em(self, 54)
        screen = self.screen()
        if screen is not None:
            available = screen.availableGeometry()
            width = min(width, int(available.width() * 0.9))
            height = min(height, int(available.height() * 0.9))
        self.resize(width, height)

    def _header_button(self, icon: str, tip: str, name: str) -> QToolButton:
        button = QToolButton()
        button.setObjectName("HeaderButton")
        button.setIcon(themed_icon(icon))
        button.setAutoRaise(True)
        button.setToolTip(tip)
        button.setAccessibleName(name)
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        return button

    def _action_slots(self) -> dict[str, Any]:
        slots: dict[str, Any] = {
            "new_chat": self.new_chat,
            "library": self.open_library,
            "import_gguf": lambda: self.open_library().ask_import_gguf(),
            "import_folder": lambda: self.open_library().ask_import_folder(),
            "download": lambda: self.open_library().ask_download(),
            "export": self._ask_export,
            "import_conversation": self._ask_import,
            "close": self.close,
            "quit": self._quit,
            "undo": self.undo_delete,
            "copy": self.copy,
            "find": self.focus_search,
            "preferences": self.open_preferences,
            "toggle_sidebar": self.toggle_sidebar,
            "stop": self.controller.stop,
            "regenerate": self.regenerate_last,
            "edit_last": self.edit_last,
            "fork": self.fork_branch,
            "previous_branch": lambda: self.step_branch(-1),
            "next_branch": lambda: self.step_branch(+1),
            "settings": self.open_settings,
            "minimize": self.showMinimized,
            "about": self._about,
        }
        for mode in THEME_MODES:
            slots[f"theme_{mode}"] = lambda _checked=False, m=mode: self.set_theme(m)
        return slots

    def _connect(self) -> None:
        c = self.controller
        c.conversationsChanged.connect(self._refresh_sidebar)
        c.conversationChanged.connect(self._on_conversation_changed)
        c.streamUpdated.connect(self._on_stream)
        c.busyChanged.connect(self._set_busy)
        c.notice.connect(self.show_notice)
        c.modelStatus.connect(self._on_model_status)
        c.memoryChanged.connect(self._on_memory)
        c.prefillProgress.connect(self._on_prefill)
        c.tokenCount.connect(self._on_token_count)
        s = self.sidebar
        s.newRequested.connect(self.new_chat)
        s.conversationActivated.connect(self._on_conversation_activated)
        s.renameRequested.connect(self._on_rename)
        s.pinRequested.connect(self._on_pin)
        s.deleteRequested.connect(self._on_delete_confirmed)
        s.searchRequested.connect(self.search)
        s.searchHitActivated.connect(self._on_search_hit)
        v = self.chat_view
        v.editSubmitted.connect(self._on_edit)
        v.regenerateRequested.connect(self._on_regenerate)
        v.siblingRequested.connect(self._on_sibling)
        v.deleteRequested.connect(self._on_delete_message)
        self.composer.sendRequested.connect(self.send)
        self.composer.stopRequested.connect(self.controller.stop)
        self.composer.draftChanged.connect(self._on_draft_changed)
        self.sidebar_button.clicked.connect(self.toggle_sidebar)
        self.settings_button.clicked.connect(self.open_settings)
        self.models.settingsSaved.connect(self._on_settings_saved)
        self.models.status.connect(self._show_status)

    # -- start and close --------------------------------------------------------------------

    def restore_state(self) -> None:
        """Geometry, splitter sizes and the conversation open last time (else the newest, else
        a new one)."""
        geometry = self.preferences.window_state("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        splitter = self.preferences.window_state("splitter")
        if splitter is not None:
            self.splitter.restoreState(splitter)
        self._refresh_sidebar()
        ids = [c.id for c in self.store.list_conversations()]
        last = self.preferences.last_conversation_id
        if last in ids:
            self.open_conversation(last)
        elif ids:
            self.open_conversation(ids[0])
        else:
            self.new_chat()

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._closed:
            self._closed = True
            self._stream_timer.stop()
            self._count_timer.stop()
            self.preferences.set_window_state("geometry", self.saveGeometry())
            self.preferences.set_window_state("splitter", self.splitter.saveState())
            try:
                self.controller.purge_deleted()
            except StoreError as exc:
                _log.warning("Deleted conversations stay until next time: %s", exc)
            self.controller.shutdown()
            self.preferences.sync()
        super().closeEvent(event)

    @Slot()
    def _quit(self) -> None:
        if self.close():
            QApplication.quit()

    # -- conversations ----------------------------------------------------------------------

    @property
    def current_conversation_id(self) -> int | None:
        return self._cid

    def open_conversation(self, conversation_id: int) -> None:
        try:
            self.controller.open_conversation(conversation_id)
            conversation = self.store.get_conversation(conversation_id)
        except StoreError as exc:
            self.show_notice(str(exc))
            return
        changed = conversation_id != self._cid
        self._cid = conversation_id
        if self.sidebar.model.row_of(str(conversation_id)) < 0:
            self._refresh_sidebar()  # made elsewhere (an import, a fork): list it first
        self.sidebar.set_current(str(conversation_id))
        self._set_title(conversation.title)
        self._render()
        if changed:
            self.composer.set_token_info(None, None)
            self._count_timer.start()
            self.composer.edit.setFocus()
            self.models.use_conversation_model(conversation_id, conversation.model_id)

    def new_chat(self) -> None:
        """A new conversation, unless the open one is still empty (then it is reused)."""
        if self._cid is not None and self._is_empty(self._cid):
            self.composer.edit.setFocus()
            return
        self.open_conversation(self.controller.new_conversation())

    def _is_empty(self, conversation_id: int) -> bool:
        try:
            return self.store.get_conversation(conversation_id).active_leaf_id is None
        except StoreError:
            return False

    def _set_title(self, title: str) -> None:
        self.title_label.setText(title)
        self.setWindowTitle(f"{title} — Branchwise")

    @Slot()
    def _refresh_sidebar(self) -> None:
        try:
            conversations = self.store.list_conversations()
        except StoreError as exc:
            self.show_notice(str(exc))
            return
        self.sidebar.set_conversations(conversation_rows(conversations))
        self.sidebar.set_current(None if self._cid is None else str(self._cid))
        # Search results on show must not list a chat just deleted, or miss one restored.
        query = self.sidebar.search_box.text().strip()
        if query:
            self.search(query)
        current = next((c for c in conversations if c.id == self._cid), None)
        if current is not None:
            self._set_title(current.title)

    @Slot(str)
    def _on_conversation_activated(self, conversation_id: str) -> None:
        self.open_conversation(int(conversation_id))

    @Slot(str, str)
    def _on_rename(self, conversation_id: str, title: str) -> None:
        self.controller.rename_conversation(int(conversation_id), title)

    @Slot(str, bool)
    def _on_pin(self, conversation_id: str, pinned: bool) -> None:
        self.controller.set_pinned(int(conversation_id), pinned)

    @Slot(str)
    def _on_delete_confirmed(self, conversation_id: str) -> None:
        self.delete_conversation(int(conversation_id))

    def delete_conversation(self, conversation_id: int) -> None:
        """Delete at once (the sidebar asked first) and offer Undo until the app closes."""
        try:
            title = self.store.get_conversation(conversation_id).title
        except StoreError as exc:
            self.show_notice(str(exc))
            return
        self.controller.delete_conversation(conversation_id)
        self._undo_delete = conversation_id
        self.menu_actions.undo.setEnabled(True)
        self.menu_actions.undo.setText(f"&Undo Delete “{title}”")
        if conversation_id == self._cid:
            self._cid = None
            remaining = self.store.list_conversations()
            if remaining:
                self.open_conversation(remaining[0].id)
            else:
                self.new_chat()
        self.banner.show_notice(f"Deleted “{title}”.", "Undo", self.undo_delete)

    @Slot()
    def undo_delete(self) -> None:
        conversation_id = self._undo_delete
        if conversation_id is None:
            return
        self._undo_delete = None
        self.menu_actions.undo.setEnabled(False)
        self.menu_actions.undo.setText("&Undo")
        self.banner.dismiss()
        self.controller.restore_conversation(conversation_id)
        if self._cid is not None and self._is_empty(self._cid):
            # The empty chat made to replace the deleted one is not worth keeping.
            empty, self._cid = self._cid, None
            self.controller.delete_conversation(empty)
        self.open_conversation(conversation_id)

    # -- search -----------------------------------------------------------------------------

    @Slot(str)
    def search(self, query: str) -> None:
        try:
            hits = self.store.search(query)
        except StoreError as exc:
            self.show_notice(str(exc))
            return
        self.sidebar.set_search_results(search_hits(hits))

    @Slot(str, str)
    def _on_search_hit(self, conversation_id: str, message_id: str) -> None:
        self.jump_to(int(conversation_id), int(message_id) if message_id else None)

    def jump_to(self, conversation_id: int, message_id: int | None) -> None:
        """Open the conversation on the branch that holds the message, scrolled to it."""
        if message_id is not None and not self.controller.switch_to_message(message_id):
            return
        self.open_conversation(conversation_id)
        if message_id is not None and self._cid == conversation_id:
            self.chat_view.scroll_to_message(str(message_id))

    @Slot()
    def focus_search(self) -> None:
        if not self.sidebar.isVisible():
            self.toggle_sidebar()
        self.sidebar.search_box.setFocus()
        self.sidebar.search_box.selectAll()

    # -- rendering --------------------------------------------------------------------------

    def _render(self) -> None:
        if self._cid is None:
            self.chat_view.set_messages([])
            return
        try:
            path = self.store.active_path(self._cid)
            tree = self.store.all_messages(self._cid)
        except StoreError as exc:
            self.show_notice(str(exc))
            return
        views = message_views(path, tree)
        for i, view in enumerate(views):
            newer = self._streamed_text.get(int(view.id))
            if newer is not None and view.status == "streaming":
                views[i] = replace(view, content=newer)
        self.chat_view.set_messages(views)

    @Slot(int)
    def _on_conversation_changed(self, conversation_id: int) -> None:
        if conversation_id == self._cid:
            self._render()

    @Slot(object)
    def _on_stream(self, payload: dict[str, Any]) -> None:
        self._streamed_text[payload["message_id"]] = payload["text"]
        self._stream = payload
        if not self._stream_timer.isActive():
            self._stream_timer.start()

    @Slot()
    def _show_stream(self) -> None:
        payload, self._stream = self._stream, None
        if payload is not None and payload["conversation_id"] == self._cid:
            self.chat_view.update_streaming(str(payload["message_id"]), payload["text"])

    @Slot(bool)
    def _set_busy(self, busy: bool) -> None:
        self.composer.set_generating(busy)
        self.menu_actions.stop.setEnabled(busy)
        self.menu_actions.regenerate.setEnabled(not busy)
        self.menu_actions.edit_last.setEnabled(not busy)
        if not busy:
            self._stream_timer.stop()
            self._stream = None
            self._streamed_text.clear()
            self.status_panel.set_prefill(0, 0)
            self._count_timer.start()

    # -- sending, editing, branching ---------------------------------------------------------

    @Slot(str)
    def send(self, text: str) -> bool:
        if self._cid is None:
            self.new_chat()
        cid = self._cid
        assert cid is not None
        first = self._is_empty(cid)
        if not self.controller.send(cid, text):
            self.composer.set_text(text)  # the draft is never lost
            return False
        if first and self.store.get_conversation(cid).title == DEFAULT_TITLE:
            self.controller.rename_conversation(cid, title_from(text))
        self.chat_view.scroll_to_bottom()
        return True

    @Slot(str, str)
    def _on_edit(self, message_id: str, text: str) -> None:
        if not self.controller.edit(int(message_id), text):
            widget = self.chat_view.message_widget(message_id)
            if widget is not None:  # reopen the editor with the text, so nothing is lost
                widget.start_editing(text)

    @Slot(str)
    def _on_delete_message(self, message_id: str) -> None:
        """Ask first: unlike a conversation, a deleted branch cannot be brought back."""
        try:
            message = self.store.get_message(int(message_id))
            below = _descendants(self.store.all_messages(message.conversation_id), message.id)
        except StoreError as exc:
            self.show_notice(str(exc))
            return
        box = QMessageBox(self)
        box.setObjectName("ConfirmDeleteMessage")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Delete message")
        box.setText("Delete this message?")
        noun = "message" if below == 1 else "messages"
        replies = f"The {below} {noun} below it in this branch go too. " if below else ""
        box.setInformativeText(f"{replies}This cannot be undone.")
        delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        delete.setAccessibleName("Delete message")
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        if box.clickedButton() is delete:
            self.controller.delete_message(message.id)

    @Slot(str)
    def _on_regenerate(self, message_id: str) -> None:
        self.controller.regenerate(int(message_id))

    @Slot(str, int)
    def _on_sibling(self, message_id: str, delta: int) -> None:
        self.controller.switch_sibling(int(message_id), delta)

    def _path_views(self) -> list[Any]:
        if self._cid is None:
            return []
        try:
            return message_views(self.store.active_path(self._cid), [])
        except StoreError:
            return []

    @Slot()
    def regenerate_last(self) -> None:
        replies = [v for v in self._path_views() if v.role == "assistant"]
        if replies:
            self.controller.regenerate(int(replies[-1].id))
        else:
            self.show_notice("There is no reply to regenerate yet.")

    @Slot()
    def fork_branch(self) -> None:
        """Copy the branch on screen into a new conversation and open it there."""
        path = self._path_views()
        if not path:
            self.show_notice("There is nothing to continue yet.")
            return
        new_id = self.controller.fork_conversation(int(path[-1].id))
        if new_id is not None:
            self.open_conversation(new_id)

    @Slot()
    def edit_last(self) -> None:
        mine = [v for v in self._path_views() if v.role == "user"]
        if not mine:
            self.show_notice("There is no message of yours to edit yet.")
            return
        self.chat_view.scroll_to_message(mine[-1].id)
        widget = self.chat_view.message_widget(mine[-1].id)
        if widget is not None:
            widget.start_editing()

    def step_branch(self, delta: int) -> None:
        """Previous/next version of the message that has the focus, else of the last message
        on the path that has versions."""
        focused = QApplication.focusWidget()
        while focused is not None and not isinstance(focused, MessageWidget):
            focused = focused.parentWidget()
        if focused is not None and focused.view.sibling_count > 1:
            self.controller.switch_sibling(int(focused.view.id), delta)
            return
        if self._cid is None:
            return
        views = message_views(self.store.active_path(self._cid), self.store.all_messages(self._cid))
        branched = [v for v in views if v.sibling_count > 1]
        if branched:
            self.controller.switch_sibling(int(branched[-1].id), delta)
        else:
            self.statusBar().showMessage("This conversation has no other versions.", 3000)

    # -- composer: token count --------------------------------------------------------------

    @Slot(str)
    def _on_draft_changed(self, _draft: str) -> None:
        self._count_timer.start()

    @Slot()
    def _request_token_count(self) -> None:
        if self._cid is not None and self.controller.model_state == "ready":
            self.controller.request_token_count(self._cid, self.composer.text())

    @Slot(object)
    def _on_token_count(self, payload: dict[str, Any]) -> None:
        if payload["conversation_id"] == self._cid:
            self.composer.set_token_info(payload["count"], payload["context_length"])

    # -- model and memory -------------------------------------------------------------------

    @Slot(object)
    def _on_model_status(self, status: dict[str, Any]) -> None:
        state = status.get("state")
        if state == "ready":
            self.composer.set_enabled_reason(None)
            self._count_timer.start()
            focused = QApplication.focusWidget()
            if not isinstance(focused, QLineEdit | QPlainTextEdit | QTextEdit):
                self.composer.edit.setFocus()  # typing goes where it is expected
            name = self.models.display_name(status.get("model_id"))
            status = {**status, "model_id": name}
        elif state == "loading":
            stage = str(status.get("message") or "Loading the model").rstrip(".…")
            self.composer.set_enabled_reason(f"{stage}… You can send once the model is ready.")
        else:
            reason = status.get("message") or "No model is loaded."
            self.composer.set_enabled_reason(
                f"{reason.rstrip('.')}. Choose a model in File › Model Library."
            )
        self.status_panel.set_model_status(status)

    @Slot(int)
    def _on_settings_saved(self, conversation_id: int) -> None:
        if conversation_id == self._cid:
            self._count_timer.start()  # the system prompt counts too

    @Slot(str)
    def _show_status(self, text: str) -> None:
        self.statusBar().showMessage(text, 4000)

    @Slot(object)
    def _on_memory(self, memory: dict[str, Any]) -> None:
        self.status_panel.set_memory(memory)

    @Slot(object)
    def _on_prefill(self, payload: dict[str, Any]) -> None:
        self.status_panel.set_prefill(payload["done"], payload["total"])

    def open_library(self) -> ModelLibraryDialog:
        return self.models.open_library()

    def open_settings(self) -> ConversationSettingsDialog:
        if self._cid is None:
            self.new_chat()
        assert self._cid is not None
        return self.models.open_settings(self._cid)

    def open_preferences(self) -> PreferencesDialog:
        from ui.preferences_dialog import PreferencesDialog

        dialog = PreferencesDialog(
            self.preferences.cache_budget_bytes, self.preferences.theme, self
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self._apply_preferences(dialog))
        dialog.open()
        return dialog

    def _apply_preferences(self, dialog: PreferencesDialog) -> None:
        self.controller.set_cache_budget(dialog.cache_budget_bytes())
        self.set_theme(dialog.theme_mode())

    def set_theme(self, mode: ThemeMode) -> None:
        self.preferences.theme = mode
        self.menu_actions.themes[mode].setChecked(True)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, mode)

    @Slot()
    def toggle_sidebar(self) -> None:
        shown = not self.sidebar.isVisible()
        self.sidebar.setVisible(shown)
        self.menu_actions.toggle_sidebar.setChecked(shown)

    # -- clipboard, export, import ----------------------------------------------------------

    @Slot()
    def copy(self) -> None:
        focused = QApplication.focusWidget()
        if hasattr(focused, "textCursor") and focused.textCursor().hasSelectedText():
            focused.copy()
            return
        replies = [v for v in self._path_views() if v.role == "assistant" and v.content]
        if replies:
            QGuiApplication.clipboard().setText(replies[-1].content)
            self.statusBar().showMessage("Copied the last reply.", 3000)

    def export_conversation(self, path: Path) -> bool:
        """JSON keeps every branch; Markdown (.md) the branch on screen."""
        if self._cid is None:
            return False
        try:
            write_export(self.store, self._cid, path)
        except (StoreError, OSError) as exc:
            self.show_notice(f"The conversation could not be exported: {exc}")
            return False
        self.statusBar().showMessage(f"Exported to {path}", 5000)
        return True

    def import_conversation(self, path: Path) -> int | None:
        try:
            conversation = read_import(self.controller, path)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, StoreError) as exc:
            self.show_notice(f"{path.name} could not be imported: {exc}")
            return None
        self.open_conversation(conversation.id)
        return conversation.id

    def _ask_export(self) -> None:
        if self._cid is not None:
            path = ask_export_path(self, self.store.get_conversation(self._cid).title)
            if path is not None:
                self.export_conversation(path)

    def _ask_import(self) -> None:
        path = ask_import_path(self)
        if path is not None:
            self.import_conversation(path)

    # -- notices ----------------------------------------------------------------------------

    @Slot(str)
    def show_notice(self, text: str) -> None:
        self.banner.show_notice(text, kind="warning")

    def _about(self) -> None:
        QMessageBox.about(
            self,
            "About Branchwise",
            "<b>Branchwise</b><br>Chat with language models on this computer. Every "
            "conversation is a tree: edits and regenerations keep every version, and switching "
            "between them is instant.",
        )


def _descendants(messages: list[Message], root_id: int) -> int:
    """How many messages sit below `root_id` in the tree."""
    children: dict[int | None, list[int]] = {}
    for message in messages:
        children.setdefault(message.parent_id, []).append(message.id)
    count, pending = 0, list(children.get(root_id, []))
    while pending:
        count += 1
        pending.extend(children.get(pending.pop(), []))
    return count
