"""The main window: the conversation sidebar beside the chat (header, messages, composer), the
status bar, the menus, and the wiring between these widgets and the chat controller.

The window holds no conversation state of its own beyond which conversation is open: it renders
the store's active path, turns the widgets' requests into controller intents, and re-renders
when the controller says something changed. Its parts, each given the window: how a streaming
reply shows (`StreamPresenter`), how the model's state shows (`ModelStatusPresenter`), the
composer's token count (`TokenCounter`), the sidebar's commands (`SidebarCommands`), the branch
commands (`BranchCommands`) and export and import (`ConversationFiles`).
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
from ui.conversation_views import message_views
from ui.draft_keeper import DraftKeeper
from ui.model_picker import ModelPicker
from ui.model_status_presenter import ModelStatusPresenter
from ui.notice_banner import NoticeBanner
from ui.sidebar import Sidebar
from ui.sidebar_commands import SidebarCommands
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
        self.sidebar_commands = SidebarCommands(self)
        self.token_counter = TokenCounter(self)

        self.menu_actions = build_actions(self, self._action_slots())
        build_menus(self.menuBar(), self.menu_actions)
        self.menu_actions.themes[preferences.theme].setChecked(True)
        self.menu_actions.toggle_sidebar.setCheckable(True)
        self.menu_actions.toggle_sidebar.setChecked(True)

        self.stream = StreamPresenter(self)
        self.model_status = ModelStatusPresenter(self)
        self.composer_extras = ComposerExtras(self)
        self.model_picker = ModelPicker(self)
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
            "undo": self.sidebar_commands.undo_delete,
            "copy": self.copy,
            "find": self.sidebar_commands.focus_search,
            "preferences": self.open_preferences,
            "toggle_sidebar": self.sidebar_commands.toggle,
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
        v, b = self.chat_view, self.branches
        v.editSubmitted.connect(b.edit)
        v.regenerateRequested.connect(b.regenerate)
        v.continueRequested.connect(b.continue_reply)
        v.siblingRequested.connect(b.switch_sibling)
        v.deleteRequested.connect(b.delete_message)
        self.composer.sendRequested.connect(self.send)
        self.composer.stopRequested.connect(self.stream.request_stop)
        self.header.sidebar_button.clicked.connect(self.sidebar_commands.toggle)
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
        self.sidebar_commands.refresh()
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
            self.sidebar_commands.refresh()  # made elsewhere (an import, a fork): list it first
        self.sidebar.set_current(str(conversation_id))
        self.show_conversation_title(conversation)
        self._render()
        if changed:
            self.composer.clear_attachments()  # a draft's files belong to its chat
            self.composer_extras.refresh_think()
            self.token_counter.restart()
            self.composer.edit.setFocus()
            self.models.use_conversation_model(conversation_id, conversation.model_id)

    def new_chat(self) -> None:
        """A new conversation, unless the open one is still empty (then it is reused)."""
        if self._cid is not None and self.is_empty(self._cid):
            self.composer.edit.setFocus()
            return
        self.open_conversation(self.controller.new_conversation())

    def close_conversation(self) -> None:
        """Show no conversation as open (it was just deleted); one is opened next."""
        self._cid = None

    def is_empty(self, conversation_id: int) -> bool:
        """Whether the conversation has no message yet (False when it cannot be read)."""
        try:
            return self.store.get_conversation(conversation_id).active_leaf_id is None
        except StoreError:
            return False

    def show_conversation_title(self, conversation: Conversation) -> None:
        self.title_label.setText(conversation.title)
        self.header.set_system_prompt(conversation.system_prompt)
        self.setWindowTitle(f"{conversation.title} — Branchwise")

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
        first = self.is_empty(cid)
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
            try:  # the header marks a system prompt, which the settings may have changed
                self.show_conversation_title(self.store.get_conversation(conversation_id))
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
        from ui.new_chat_defaults import ChatDefaults
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
            cpu_float32=self.preferences.cpu_float32,
            server_enabled=self.preferences.server_enabled,
            server=self.preferences.server_config,
            new_chats=ChatDefaults.of(self.preferences),
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
        self.preferences.cpu_float32 = dialog.cpu_float32_policy()
        dialog.new_chats().save_to(self.preferences)
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

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.sidebar_commands.follow_width(self.width() < em(self, NARROW_EM))

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
        show_about(self, self.controller.model_info)
