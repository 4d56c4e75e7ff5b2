"""The main window: the conversation sidebar beside the chat (header, messages, composer), the
status bar, the menus, and the wiring between these widgets and the chat controller.

The window holds no conversation state of its own beyond which conversation is open: it renders
the store's active path, turns the widgets' requests into controller intents, and re-renders
when the controller says something changed. Its parts, each given the window: how a streaming
reply shows (`StreamPresenter`), how the model's state shows (`ModelStatusPresenter`), the
composer's token count (`TokenCounter`), the branch commands (`BranchCommands`) and export and
import (`ConversationFiles`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QGuiApplication, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QMainWindow,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.server_config import ServerConfig
from app.store import DEFAULT_TITLE, Conversation, StoreError
from ui.about_box import show_about
from ui.branch_commands import BranchCommands
from ui.chat_header import ChatHeader
from ui.chat_view import ChatView
from ui.compare_features import CompareFeatures
from ui.composer import Composer
from ui.composer_extras import ComposerExtras
from ui.conversation_files import ConversationFiles
from ui.conversation_views import conversation_rows, message_views, search_hits
from ui.draft_keeper import DraftKeeper
from ui.model_status_presenter import ModelStatusPresenter
from ui.notice_banner import NoticeBanner
from ui.plain_text import menu_text
from ui.sidebar import Sidebar
from ui.status_panel import StatusPanel
from ui.stream_presenter import StreamPresenter
from ui.theme import THEME_MODES, ThemeMode, apply_theme, em
from ui.token_counter import TokenCounter
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

_TITLE_CHARS = 48
_COLUMN_EM = 48


def title_from(text: str) -> str:
    """A conversation title from its first message: the first line, shortened at a word."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), DEFAULT_TITLE)
    if len(line) <= _TITLE_CHARS:
        return line
    cut = line[:_TITLE_CHARS].rsplit(" ", 1)[0] or line[:_TITLE_CHARS]
    return cut.rstrip(" ,.;:") + "…"


# Below this width, in em, the sidebar folds away by itself.
NARROW_EM = 45


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
        self._undo_delete: int | None = None
        self._narrow = False  # narrower than NARROW_EM: the sidebar folds away by itself
        self._folded_by_width = False
        self._closed = False

        self.sidebar = Sidebar()
        self.header = ChatHeader()
        self.title_label = self.header.title_label
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
        self.branches = BranchCommands(self)
        self.files = ConversationFiles(self)
        self.token_counter = TokenCounter(self)

        self.menu_actions = build_actions(self, self._action_slots())
        build_menus(self.menuBar(), self.menu_actions)
        self.menu_actions.themes[preferences.theme].setChecked(True)
        self.menu_actions.toggle_sidebar.setCheckable(True)
        self.menu_actions.toggle_sidebar.setChecked(True)

        self.stream = StreamPresenter(self)
        self.model_status = ModelStatusPresenter(self)
        self.composer_extras = ComposerExtras(self)
        self._connect()
        self.compare = CompareFeatures(self)
        self.stream.set_busy(False)
        self.model_status.show_status(controller.last_model_status)
        self._default_size()

    # -- layout -----------------------------------------------------------------------------

    def _build_layout(self) -> None:
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
        column.addWidget(self.header)
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

    def _action_slots(self) -> dict[str, Any]:
        slots: dict[str, Any] = {
            "new_chat": self.new_chat,
            "library": self.open_library,
            "import_gguf": lambda: self.open_library().ask_import_gguf(),
            "import_folder": lambda: self.open_library().ask_import_folder(),
            "download": lambda: self.open_library().ask_download(),
            "export": self.files.ask_export,
            "import_conversation": self.files.ask_import,
            "close": self.close,
            "quit": self._quit,
            "undo": self.undo_delete,
            "copy": self.copy,
            "find": self.focus_search,
            "preferences": self.open_preferences,
            "toggle_sidebar": self.toggle_sidebar,
            "stop": lambda: self.stream.request_stop(),
            "regenerate": self.branches.regenerate_last,
            "edit_last": self.branches.edit_last,
            "fork": self.branches.fork_branch,
            "previous_branch": lambda: self.branches.step_branch(-1),
            "next_branch": lambda: self.branches.step_branch(+1),
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
        c.streamUpdated.connect(self.stream.on_stream)
        c.busyChanged.connect(self.stream.set_busy)
        c.notice.connect(self.show_notice)
        c.contextFull.connect(self._on_context_full)
        c.modelStatus.connect(self.model_status.show_status)
        c.memoryChanged.connect(self.model_status.show_memory)
        c.prefillProgress.connect(self.stream.on_prefill)
        self.stream.idle.connect(self.token_counter.schedule)
        self.model_status.ready.connect(self.token_counter.schedule)
        s = self.sidebar
        s.newRequested.connect(self.new_chat)
        s.conversationActivated.connect(self._on_conversation_activated)
        s.renameRequested.connect(self._on_rename)
        s.pinRequested.connect(self._on_pin)
        s.exportRequested.connect(self._on_export)
        s.deleteRequested.connect(self._on_delete_confirmed)
        s.searchRequested.connect(self.search)
        s.searchHitActivated.connect(self._on_search_hit)
        v, b = self.chat_view, self.branches
        v.editSubmitted.connect(b.edit)
        v.regenerateRequested.connect(b.regenerate)
        v.continueRequested.connect(b.continue_reply)
        v.siblingRequested.connect(b.switch_sibling)
        v.deleteRequested.connect(b.delete_message)
        self.composer.sendRequested.connect(self.send)
        self.composer.stopRequested.connect(self.stream.request_stop)
        self.header.sidebar_button.clicked.connect(self.toggle_sidebar)
        self.header.settings_button.clicked.connect(self.open_settings)
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

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        self.composer_extras.drag_enter(event)

    def dropEvent(self, event: QDropEvent) -> None:
        self.composer_extras.drop(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._closed:
            self._closed = True
            self.stream.stop()
            self.token_counter.stop()
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
        self._set_title(conversation)
        self._render()
        if changed:
            self.composer.clear_attachments()  # a draft's files belong to its chat
            self.composer_extras.refresh_think()
            self.token_counter.restart()
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

    def _set_title(self, conversation: Conversation) -> None:
        self.title_label.setText(conversation.title)
        self.header.set_system_prompt(conversation.system_prompt)
        self.setWindowTitle(f"{conversation.title} — Branchwise")

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
            self._set_title(current)

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
    def _on_export(self, conversation_id: str) -> None:
        self.open_conversation(int(conversation_id))  # export takes the chat on screen
        self.files.ask_export()

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
        self.menu_actions.undo.setText(f"&Undo Delete “{menu_text(title)}”")
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
        self.chat_view.set_messages(self.stream.with_streamed_text(message_views(path, tree)))

    @Slot(int)
    def _on_conversation_changed(self, conversation_id: int) -> None:
        if conversation_id == self._cid:
            self._render()

    # -- sending -----------------------------------------------------------------------------

    @Slot(str)
    def send(self, text: str) -> bool:
        if self._cid is None:
            self.new_chat()
        cid = self._cid
        assert cid is not None
        first = self._is_empty(cid)
        if not self.controller.send(cid, text, self.composer.attachments()):
            self.composer.set_text(text)  # the draft is never lost (its files stay attached)
            return False
        self.composer.clear_attachments()
        if first and self.store.get_conversation(cid).title == DEFAULT_TITLE:
            self.controller.rename_conversation(cid, title_from(text))
        self.chat_view.scroll_to_bottom()
        return True

    # -- models, settings, preferences ------------------------------------------------------

    @Slot(int)
    def _on_settings_saved(self, conversation_id: int) -> None:
        if conversation_id == self._cid:
            self.token_counter.schedule()  # the system prompt counts too
            try:
                self._set_title(self.store.get_conversation(conversation_id))  # its marker
            except StoreError as exc:
                self.show_notice(str(exc))

    @Slot(str)
    def _show_status(self, text: str) -> None:
        self.statusBar().showMessage(text, 4000)

    def open_library(self) -> ModelLibraryDialog:
        return self.models.open_library()

    def open_settings(self) -> ConversationSettingsDialog:
        if self._cid is None:
            self.new_chat()
        assert self._cid is not None
        return self.models.open_settings(self._cid)

    def open_preferences(self) -> PreferencesDialog:
        from ui.preferences_dialog import PreferencesDialog

        memory = self.status_panel.last_memory
        disk_budget = self.preferences.disk_budget_bytes
        dialog = PreferencesDialog(
            self.preferences.cache_budget_bytes,
            self.preferences.theme,
            self,
            disk_budget_bytes=(
                int(memory.get("disk_budget_bytes") or 0) if disk_budget is None else disk_budget
            ),
            disk_bytes=int(memory.get("disk_bytes") or 0),
            overflow=self.preferences.overflow_policy,
            server_enabled=self.preferences.server_enabled,
            server=self.preferences.server_config,
            models=self.models.library(),
            current_model=self.models.loaded_id(),
            draft_for=self.preferences.draft_model_for,
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.clearSavedRequested.connect(self.clear_saved_caches)
        self.controller.memoryChanged.connect(dialog.show_memory)
        dialog.accepted.connect(lambda: self._apply_preferences(dialog))
        dialog.open()
        return dialog

    def _apply_preferences(self, dialog: PreferencesDialog) -> None:
        self.controller.set_cache_budget(dialog.cache_budget_bytes())
        disk_budget = dialog.disk_budget_bytes()
        if disk_budget is not None:
            self.controller.set_disk_budget(disk_budget)
        self.preferences.overflow_policy = dialog.overflow_policy()
        for model_id, draft_id in dialog.draft_defaults().items():
            self.preferences.set_draft_model_for(model_id, draft_id)
        self.token_counter.schedule()  # the meter's warning names the policy
        self.set_theme(dialog.theme_mode())
        self._apply_server(dialog.server_enabled(), dialog.server_config())

    def _apply_server(self, enabled: bool, config: ServerConfig) -> None:
        """Start, restart or stop the local server when its settings changed."""
        was = (self.preferences.server_enabled, self.preferences.server_config)
        self.preferences.server_enabled = enabled
        self.preferences.server_config = config
        if (enabled, config) != was or (enabled and self.controller.server.url is None):
            self.controller.server.apply(config if enabled else None)

    @Slot()
    def clear_saved_caches(self) -> None:
        self.controller.clear_saved_caches(on_done=self._saved_caches_cleared)

    def _saved_caches_cleared(self, cleared: bool) -> None:
        if cleared:
            self.statusBar().showMessage("Saved caches cleared.", 4000)
        else:
            self.show_notice("Load a model first: saved caches are kept per model.")

    @Slot(object)
    def _on_context_full(self, payload: dict[str, Any]) -> None:
        conversation_id = payload["conversation_id"]
        self.banner.show_notice(
            payload["message"],
            "Continue in a New Chat",
            lambda: self._continue_in_new_chat(conversation_id),
            kind="warning",
            sticky=True,
        )

    def _continue_in_new_chat(self, conversation_id: int) -> None:
        new = self.controller.continue_in_new_chat(conversation_id)
        if new is not None:
            self.open_conversation(new)

    def set_theme(self, mode: ThemeMode) -> None:
        self.preferences.theme = mode
        self.menu_actions.themes[mode].setChecked(True)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, mode)

    @Slot()
    def toggle_sidebar(self) -> None:
        self._folded_by_width = False  # the person's choice stands until the next fold
        self._show_sidebar(self.sidebar.isHidden())

    def _show_sidebar(self, shown: bool) -> None:
        self.sidebar.setVisible(shown)
        self.menu_actions.toggle_sidebar.setChecked(shown)

    def resizeEvent(self, event: QResizeEvent) -> None:
        # A narrow window gives the chat the room; widened again, the sidebar comes back if it
        # was folded for the width (not if the person hid it).
        super().resizeEvent(event)
        narrow = self.width() < em(self, NARROW_EM)
        if narrow == self._narrow:
            return
        self._narrow = narrow
        if narrow and not self.sidebar.isHidden():
            self._folded_by_width = True
            self._show_sidebar(False)
        elif not narrow and self._folded_by_width:
            self._folded_by_width = False
            self._show_sidebar(True)

    # -- clipboard, export, import ----------------------------------------------------------

    @Slot()
    def copy(self) -> None:
        focused = QApplication.focusWidget()
        if hasattr(focused, "textCursor") and focused.textCursor().hasSelectedText():
            focused.copy()
            return
        replies = [v for v in self.branches.path_views() if v.role == "assistant" and v.content]
        if replies:
            QGuiApplication.clipboard().setText(replies[-1].content)
            self.statusBar().showMessage("Copied the last reply.", 3000)

    def export_conversation(self, path: Path) -> bool:
        return self.files.export_to(path)

    def import_conversation(self, path: Path) -> int | None:
        return self.files.import_from(path)

    # -- notices ----------------------------------------------------------------------------

    @Slot(str)
    def show_notice(self, text: str) -> None:
        self.banner.show_notice(text, kind="warning")

    def _about(self) -> None:
        show_about(self)
