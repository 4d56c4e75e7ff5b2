"""The settings, as the window handles them: the open conversation's settings dialog (the
header and the token count follow what it saves), and the app's Preferences dialog, opened with
today's values and applied when accepted (memory and disk budgets, the overflow policy, new-chat
defaults, each model's draft model and image detail, the theme, the local server, tool use),
which can also clear the saved caches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Qt, Slot

from app.store.conversations import StoreError
from ui.window.window_host import ChatWindow

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar

    from app.server.config import ServerConfig
    from app.settings import Preferences
    from app.store.conversations import Conversation
    from ui.dialogs.conversation_settings import ConversationSettingsDialog
    from ui.dialogs.preferences_dialog import PreferencesDialog
    from ui.widgets.theme import ThemeMode
    from ui.window.composer_extras import ComposerExtras
    from ui.window.models import WindowModels
    from ui.window.status_panel import StatusPanel
    from ui.window.token_counter import TokenCounter
    from ui.window.tool_features import ToolFeatures


class SettingsHost(ChatWindow, Protocol):
    """The window as the settings' commands use it."""

    preferences: Preferences
    status_panel: StatusPanel
    models: WindowModels
    token_counter: TokenCounter
    tools: ToolFeatures
    composer_extras: ComposerExtras

    def set_theme(self, mode: ThemeMode) -> None: ...

    def show_conversation_title(self, conversation: Conversation) -> None: ...

    def statusBar(self) -> QStatusBar: ...


class SettingsCommands(QObject):
    def __init__(self, window: SettingsHost) -> None:
        super().__init__(window.window())
        self._window = window
        self._controller = window.controller
        self._preferences = window.preferences
        window.models.settingsSaved.connect(self._on_settings_saved)

    # -- the open conversation's settings ---------------------------------------------------

    def open_settings(self) -> ConversationSettingsDialog:
        if self._window.current_conversation_id is None:
            self._window.new_chat()
        cid = self._window.current_conversation_id
        assert cid is not None
        return self._window.models.open_settings(cid)

    @Slot(int)
    def _on_settings_saved(self, conversation_id: int) -> None:
        if conversation_id == self._window.current_conversation_id:
            self._window.token_counter.schedule()  # the system prompt counts too
            try:  # the header marks a system prompt, which the settings may have changed
                conversation = self._window.store.get_conversation(conversation_id)
            except StoreError as exc:
                self._window.show_notice(str(exc))
                return
            self._window.show_conversation_title(conversation)

    # -- the app's preferences --------------------------------------------------------------

    def open_preferences(self) -> PreferencesDialog:
        # The dialog is imported when first used: the window must be on screen fast.
        from ui.dialogs.new_chat_defaults import ChatDefaults
        from ui.dialogs.preferences_dialog import PreferencesDialog

        preferences = self._preferences
        memory = self._window.status_panel.last_memory
        disk_budget = preferences.disk_budget_bytes
        dialog = PreferencesDialog(
            preferences.cache_budget_bytes,
            preferences.theme,
            self._window.window(),
            disk_budget_bytes=(memory.disk_budget_bytes if disk_budget is None else disk_budget),
            disk_bytes=memory.disk_bytes,
            overflow=preferences.overflow_policy,
            cpu_float32=preferences.cpu_float32,
            server_enabled=preferences.server_enabled,
            server=preferences.server_config,
            new_chats=ChatDefaults.of(preferences),
            models=self._window.models.library(),
            current_model=self._window.models.loaded_id(),
            draft_for=preferences.draft_model_for,
            detail_for=preferences.image_detail_for,
            tools_page=self._window.tools.preferences_page(),
            summaries=preferences.summaries,
            collections=self._controller.knowledge.names(),
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.clearSavedRequested.connect(self.clear_saved_caches)
        self._controller.memoryChanged.connect(dialog.show_memory)
        dialog.accepted.connect(lambda: self._apply(dialog))
        dialog.open()
        return dialog

    def _apply(self, dialog: PreferencesDialog) -> None:
        self._controller.set_cache_budget(dialog.cache_budget_bytes())
        disk_budget = dialog.disk_budget_bytes()
        if disk_budget is not None:
            self._controller.set_disk_budget(disk_budget)
        self._preferences.overflow_policy = dialog.overflow_policy()
        self._preferences.summaries = dialog.summaries()
        self._preferences.cpu_float32 = dialog.cpu_float32_policy()
        dialog.new_chats().save_to(self._preferences)
        for model_id, draft_id in dialog.draft_defaults().items():
            self._preferences.set_draft_model_for(model_id, draft_id)
        loaded_detail = self._controller.image_detail()
        for model_id, detail in dialog.image_details().items():
            self._preferences.set_image_detail_for(model_id, detail)
        if self._controller.image_detail() != loaded_detail:
            # The draft's images cost another number of tokens at the new size.
            self._window.composer_extras.refresh_model_controls()
        self._window.token_counter.schedule()  # the meter's warning names the policy
        self._window.set_theme(dialog.theme_mode())
        self._apply_server(dialog.server_enabled(), dialog.server_config())
        if dialog.tools_page is not None:
            self._window.tools.apply_page(dialog.tools_page)

    def _apply_server(self, enabled: bool, config: ServerConfig) -> None:
        """Start, restart or stop the local server when its settings changed."""
        was = (self._preferences.server_enabled, self._preferences.server_config)
        self._preferences.server_enabled = enabled
        self._preferences.server_config = config
        if (enabled, config) != was or (enabled and self._controller.server.url is None):
            self._controller.server.apply(config if enabled else None)

    @Slot()
    def clear_saved_caches(self) -> None:
        self._controller.clear_saved_caches(on_done=self._saved_caches_cleared)

    def _saved_caches_cleared(self, cleared: bool) -> None:
        if cleared:
            self._window.statusBar().showMessage("Saved caches cleared.", 4000)
        else:
            self._window.show_notice("Load a model first: saved caches are kept per model.")
