"""The window's model handling: the library dialog, the per-conversation settings dialog, and
loading the model a conversation uses (after checking that it fits in memory).

A loaded model's id is its folder's name, so library entries are matched by `path.name`.
The library and the dialogs are imported when first used: the window must be on screen fast,
and app.library.entries pulls in importlib.metadata and psutil.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QWidget

from app.async_tasks import spawn
from app.generation.model_session import ModelState
from app.remote.connections import is_remote

if TYPE_CHECKING:
    from app.chat.controller import ChatController
    from app.library.entries import ModelInfo
    from ui.dialogs.conversation_settings import ConversationSettingsDialog
    from ui.dialogs.model_library import ModelLibraryDialog


class WindowModels(QObject):
    settingsSaved = Signal(int)  # conversation id
    status = Signal(str)  # a passing message for the status bar
    speechModelChosen = Signal(str)  # the id of a Whisper model, chosen in the library to dictate

    def __init__(
        self,
        controller: ChatController,
        models_dir: Path,
        window: QWidget,
        current_conversation: Callable[[], int | None],
        notice: Callable[[str], None],
    ) -> None:
        super().__init__(window)
        self._controller = controller
        self._models_dir = models_dir
        self._window = window
        self._current_conversation = current_conversation
        self._notice = notice
        self._library_dialog: ModelLibraryDialog | None = None  # made on first use
        self._settings_dialog: ConversationSettingsDialog | None = None  # while one is open

    def library(self) -> list[ModelInfo]:
        from app.library.entries import list_models

        return list_models(self._models_dir)

    def find(self, model_id: str | None) -> ModelInfo | None:
        return next((m for m in self.library() if m.path.name == model_id), None)

    def display_name(self, model_id: str | None) -> str | None:
        """The library's name for a loaded model."""
        info = self.find(model_id)
        return info.name if info is not None else model_id

    def loaded_id(self) -> str | None:
        info = self._controller.model_info
        return info.model_id if info is not None else None

    def load(self, info: ModelInfo, conversation_id: int | None) -> bool:
        """Use a library model for the conversation: record it there and load it."""
        from app.generation.worker_models import load_refusal

        controller = self._controller
        refusal = load_refusal(
            info, controller.worker.held_models(), controller.preferences.cpu_float32
        )
        if refusal is not None:
            self._notice(refusal)
            return False
        if conversation_id is not None:
            self._controller.update_settings(conversation_id, model_id=info.path.name)
        ready = self._controller.model_state == ModelState.READY
        if self.loaded_id() != info.path.name or not ready:
            self._controller.load_model(info.path)
        return True

    def use(self, conversation_id: int, model_id: str) -> bool:
        """Switch the conversation to `model_id`: a remote model is only recorded (its server
        has it), a library model is recorded and loaded. False when it cannot be used."""
        if is_remote(model_id):
            self._controller.update_settings(conversation_id, model_id=model_id)
            return True
        info = self.find(model_id)
        if info is None or info.problem is not None:
            self._notice(f"{model_id} is not a usable model in the library.")
            return False
        if model_id != self.loaded_id():
            self.status.emit(f"Loading {info.name} for this conversation…")
        return self.load(info, conversation_id)

    def use_conversation_model(self, conversation_id: int, model_id: str | None) -> None:
        """A conversation keeps its model: opening it loads that model if another is loaded."""
        loaded = self.loaded_id()
        if not model_id or loaded is None or model_id == loaded or self._controller.is_busy():
            return
        info = self.find(model_id)
        if info is not None and info.problem is None:
            self.status.emit(f"Loading {info.name} for this conversation…")
            self.load(info, conversation_id)

    # -- dialogs ----------------------------------------------------------------------------

    def open_library(self) -> ModelLibraryDialog:
        from ui.dialogs.model_library import ModelLibraryDialog

        if self._library_dialog is None:
            self._library_dialog = ModelLibraryDialog(
                self._models_dir, self._controller.worker, self._window
            )
            self._library_dialog.modelChosen.connect(self._on_model_chosen)
            self._library_dialog.speechModelChosen.connect(
                lambda info: self.speechModelChosen.emit(info.id)
            )
            self._library_dialog.libraryChanged.connect(self._on_library_changed)
            self._library_dialog.defaultChosen.connect(self._on_default_chosen)
        dialog = self._library_dialog
        # Over the window-modal settings dialog the library must be modal too, or the settings
        # dialog blocks it and it takes no clicks; from the menu it stays modeless.
        modality = (
            Qt.WindowModality.NonModal
            if self._settings_dialog is None
            else Qt.WindowModality.WindowModal
        )
        if dialog.windowModality() != modality:
            dialog.hide()  # a new modality takes effect when the window is shown
            dialog.setWindowModality(modality)
        loaded = self.find(self.loaded_id())
        dialog.loaded_id = None if loaded is None else loaded.id
        dialog.default_id = self._controller.preferences.default_model_id
        dialog.refresh()
        if loaded is not None:
            dialog.select(loaded.id)
        dialog.show()
        dialog.raise_()
        return dialog

    def open_settings(self, conversation_id: int) -> ConversationSettingsDialog:
        from app.chat.controller import new_chat_params
        from ui.dialogs.conversation_settings import ConversationSettingsDialog

        conversation = self._controller.store.get_conversation(conversation_id)
        current = conversation.model_id or self.loaded_id()
        loaded = self._controller.model_info
        preferences = self._controller.preferences
        dialog = ConversationSettingsDialog(
            conversation,
            self.library(),
            current,
            self._window,
            default_overflow=preferences.overflow_policy,
            default_draft_for=preferences.draft_model_for,
            defaults=new_chat_params(preferences.default_params),
            contexts={loaded.model_id: loaded.context_length} if loaded else None,
            presets=self._controller.presets.presets(),
        )
        dialog.libraryRequested.connect(self.open_library)
        dialog.presetSaveRequested.connect(lambda: self._save_preset(dialog))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self._apply_settings(conversation_id, dialog, current))
        dialog.finished.connect(self._forget_settings_dialog)
        self._settings_dialog = dialog
        dialog.open()
        if self._controller.connections is not None:
            spawn(self._offer_remote_models(dialog))
        return dialog

    async def _offer_remote_models(self, dialog: ConversationSettingsDialog) -> None:
        """Add the connected servers' models to the open dialog once they have answered."""
        from app.remote.client import remote_model_ids

        assert self._controller.connections is not None
        model_ids = await remote_model_ids(self._controller.connections)
        if self._settings_dialog is dialog:
            dialog.add_remote_models(model_ids)

    def _save_preset(self, dialog: ConversationSettingsDialog) -> None:
        """Name a preset of what the settings dialog shows; it is then the dialog's choice."""
        from app.chat.presets.bundle import PresetSettings
        from ui.dialogs.preset_manager import SavePresetDialog

        ask = SavePresetDialog("", dialog)
        if not ask.exec():
            return
        shown = dialog.settings()
        model = shown.model_folder_name if ask.with_model.isChecked() else None
        settings = PresetSettings(shown.system_prompt, model, shown.params)
        preset = self._controller.presets.create(ask.name.text(), settings.trimmed())
        if preset is not None:
            dialog.add_preset(preset)

    @Slot(object)
    def _on_model_chosen(self, info: ModelInfo) -> None:
        self.load(info, self._current_conversation())

    @Slot(str)
    def _on_default_chosen(self, model_id: str) -> None:
        self._controller.preferences.default_model_id = model_id
        self.status.emit(f"New chats start with {self.display_name(model_id)}.")

    @Slot()
    def _forget_settings_dialog(self) -> None:
        self._settings_dialog = None

    @Slot()
    def _on_library_changed(self) -> None:
        """A model added, renamed or deleted shows at once in an open settings dialog."""
        dialog = self._settings_dialog
        if dialog is not None:
            dialog.set_models(self.library(), dialog.model_box.currentData())

    def _apply_settings(
        self, conversation_id: int, dialog: ConversationSettingsDialog, before: str | None
    ) -> None:
        chosen = dialog.settings()
        self._controller.update_settings(
            conversation_id, system_prompt=chosen.system_prompt, params=chosen.params
        )
        self._controller.presets.mark(conversation_id, chosen.preset_id)
        if chosen.model_folder_name and chosen.model_folder_name != before:
            self.use(conversation_id, chosen.model_folder_name)
        self.settingsSaved.emit(conversation_id)
