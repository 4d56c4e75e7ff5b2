"""The main window: the conversation sidebar beside the chat (header, messages, composer), the
status bar, the menus, and the wiring between these widgets and the chat controller.

The window holds no conversation state of its own beyond which conversation is open: it renders
the store's active path, turns the widgets' requests into controller intents, and re-renders
when the controller says something changed. Its parts, each given the window, live beside it in
`ui/window/`: the stream, the model's state, the token count, the sidebar's, branch, file and
settings commands, and one object per capability (Compare, tools, knowledge, summaries, voice,
projects and presets); its layout is built by `window_layout`.
"""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Slot
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QGuiApplication, QResizeEvent
from PySide6.QtWidgets import QApplication, QMainWindow, QPlainTextEdit, QTextEdit, QWidget

from app.store.conversations import DEFAULT_TITLE, Conversation, StoreError
from ui.chat.chat_header import ChatHeader
from ui.chat.chat_view import ChatView
from ui.chat.composer import Composer
from ui.chat.draft_keeper import DraftKeeper
from ui.chat.notice_banner import NoticeBanner
from ui.dialogs.about_box import show_about
from ui.sidebar.sidebar import Sidebar
from ui.widgets.theme import THEME_MODES, ThemeMode, apply_theme, em
from ui.window.actions import build_actions, build_menus
from ui.window.branch_commands import BranchCommands
from ui.window.compaction_features import CompactionFeatures
from ui.window.compare_features import CompareFeatures
from ui.window.composer_extras import ComposerExtras
from ui.window.conversation_files import ConversationFiles
from ui.window.conversation_views import message_views, title_from
from ui.window.history_import import HistoryImport
from ui.window.knowledge_commands import KnowledgeCommands
from ui.window.knowledge_features import KnowledgeFeatures
from ui.window.model_compare import ModelCompare
from ui.window.model_picker import ModelPicker
from ui.window.model_status_presenter import ModelStatusPresenter
from ui.window.models import WindowModels
from ui.window.preset_features import PresetFeatures
from ui.window.project_commands import ProjectCommands
from ui.window.replay_features import ReplayFeatures
from ui.window.settings_commands import SettingsCommands
from ui.window.sidebar_commands import SidebarCommands
from ui.window.status_panel import StatusPanel
from ui.window.stream_presenter import StreamPresenter
from ui.window.token_counter import TokenCounter
from ui.window.tool_features import ToolFeatures
from ui.window.voice_features import VoiceFeatures
from ui.window.window_layout import chat_splitter, restore_geometry, save_geometry, set_first_size

# The dialogs are imported when first used: the window must be on screen fast.
if TYPE_CHECKING:
    from app.chat.controller import ChatController
    from app.operations.knowledge_activity import KnowledgeActivity
    from app.paths import AppPaths
    from app.settings import Preferences
    from ui.dialogs.conversation_settings import ConversationSettingsDialog
    from ui.dialogs.model_library import ModelLibraryDialog
    from ui.dialogs.preferences_dialog import PreferencesDialog

_log = logging.getLogger(__name__)

# Below this width, in em, the sidebar folds away by itself.
NARROW_EM = 45


class MainWindow(QMainWindow):
    def __init__(
        self,
        controller: ChatController,
        paths: AppPaths,
        preferences: Preferences,
        knowledge: KnowledgeActivity,
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
        self.drafts = DraftKeeper(self.composer, controller, self)
        self.status_panel = StatusPanel()
        self.models = WindowModels(
            controller, paths.models_dir, self, lambda: self._cid, self.show_notice
        )
        self.statusBar().addPermanentWidget(self.status_panel)
        self.statusBar().setSizeGripEnabled(False)
        self.splitter = chat_splitter(
            self, self.sidebar, self.header, self.banner, self.chat_view, self.composer
        )
        self.setCentralWidget(self.splitter)
        self.branches = BranchCommands(self)
        self.files = ConversationFiles(self)
        self.history_import = HistoryImport(self)
        self.sidebar_commands = SidebarCommands(self)
        self.token_counter = TokenCounter(self)
        self.settings_commands = SettingsCommands(self)
        self.projects = ProjectCommands(self)
        self.knowledge_folders = KnowledgeCommands(self, knowledge)  # the Knowledge page

        self.menu_actions = build_actions(self, self._action_slots())
        build_menus(self.menuBar(), self.menu_actions)
        self.history_import.update_undo_action()
        self.menu_actions.themes[preferences.theme].setChecked(True)
        self.menu_actions.toggle_sidebar.setCheckable(True)
        self.menu_actions.toggle_sidebar.setChecked(True)

        self.stream = StreamPresenter(self)
        self.model_status = ModelStatusPresenter(self)
        self.composer_extras = ComposerExtras(self)
        self.presets = PresetFeatures(self)  # ahead of the model picker: it goes first
        self.model_picker = ModelPicker(self)
        self._connect()
        self.compare = CompareFeatures(self)
        self.model_compare = ModelCompare(self)  # after `compare`: it extends reply menus
        self.tools = ToolFeatures(self)
        self.knowledge = KnowledgeFeatures(self)  # after `tools`: a choice refreshes its button
        self.replay = ReplayFeatures(self)  # each reply's Details and Replay
        self.compaction = CompactionFeatures(self)  # summaries: compacted branches
        self.voice = VoiceFeatures(self, paths.models_dir)  # dictation, read-aloud, conversation
        self.stream.set_busy(False)
        self.model_status.show_status(controller.last_model_status)
        set_first_size(self)

    # -- menus and signals ------------------------------------------------------------------

    def _action_slots(self) -> dict[str, Any]:
        slots: dict[str, Any] = {
            "new_chat": self.new_chat,
            "library": self.open_library,
            "knowledge": self.knowledge_folders.open_page,
            "import_gguf": lambda: self.open_library().ask_import_gguf(),
            "import_folder": lambda: self.open_library().ask_import_folder(),
            "download": lambda: self.open_library().ask_download(),
            "export": self.files.ask_export,
            "import_conversation": self.files.ask_import,
            "import_chats": self.history_import.ask_files,
            "import_chats_folder": self.history_import.ask_folder,
            "undo_import": self.history_import.undo_last,
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
            slots[f"theme_{mode}"] = partial(self.set_theme, mode)
        return slots

    def _connect(self) -> None:
        c = self.controller
        c.conversationChanged.connect(self._on_conversation_changed)
        c.streamUpdated.connect(self.stream.on_stream)
        c.busyChanged.connect(self.stream.set_busy)
        c.notice.connect(self.show_notice)
        c.contextFull.connect(self.branches.offer_new_chat)
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
        self.models.status.connect(self._show_status)

    # -- start and close --------------------------------------------------------------------

    def restore_state(self) -> None:
        """Geometry, splitter sizes and the conversation open last time (else the newest, else
        a new one)."""
        restore_geometry(self, self.splitter, self.preferences)
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
        self.history_import.drop(event)  # chat exports are imported, other files attached

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._closed:
            self._closed = True
            self.stream.stop()
            self.voice.shutdown()
            self.token_counter.stop()
            self.knowledge_folders.stop()
            save_geometry(self, self.splitter, self.preferences)
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
            self.composer_extras.refresh_model_controls()
            self.tools.conversation_shown()
            self.knowledge.conversation_shown()
            self.token_counter.restart()
            self.composer.edit.setFocus()
            self.models.use_conversation_model(conversation_id, conversation.model_id)

    def new_chat(self) -> None:
        """A new conversation, unless the open one is still empty and in no project (then it
        is reused)."""
        if self._cid is not None and self.is_empty(self._cid) and not self._in_project(self._cid):
            self.composer.edit.setFocus()
            return
        self.open_conversation(self.controller.new_conversation())

    def _in_project(self, conversation_id: int) -> bool:
        try:
            return self.store.get_conversation(conversation_id).project_id is not None
        except StoreError:
            return False

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
        tools = self.controller.tools.call_labels(self._cid, path)
        label, sources = self.model_compare.reply_label, self.controller.knowledge.sources(path)
        views = message_views(path, tree, self.store.images, tools, label, sources)
        self.chat_view.set_messages(self.stream.with_streamed_text(views))

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

    # -- models, settings, preferences, theme -----------------------------------------------

    @Slot(str)
    def _show_status(self, text: str) -> None:
        self.statusBar().showMessage(text, 4000)

    def open_library(self) -> ModelLibraryDialog:
        return self.models.open_library()

    def open_settings(self) -> ConversationSettingsDialog:
        return self.settings_commands.open_settings()

    def open_preferences(self) -> PreferencesDialog:
        return self.settings_commands.open_preferences()

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
        widget = QApplication.focusWidget()
        if isinstance(widget, QTextEdit | QPlainTextEdit) and widget.textCursor().hasSelection():
            widget.copy()
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
