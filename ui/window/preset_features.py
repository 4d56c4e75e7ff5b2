"""Presets in the window: the picker by the composer (the open chat's preset and its drift;
giving the chat a preset, saving its settings as one, updating its preset from it) and the
preset manager. It follows the chat on screen and the list of presets, and is disabled while a
reply is being written (a preset may switch the chat's model)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Qt, Slot

from app.store.conversations import StoreError
from ui.chat.preset_button import NO_PRESET, PresetButton, pick_of
from ui.window.window_host import ChatPane

if TYPE_CHECKING:
    from app.store.conversations import Conversation
    from ui.dialogs.preset_manager import PresetManagerDialog
    from ui.window.models import WindowModels
    from ui.window.token_counter import TokenCounter

_BUSY_TIP = "The preset can be changed once the reply is finished"


class PresetHost(ChatPane, Protocol):
    """The window as the preset features use it."""

    models: WindowModels
    token_counter: TokenCounter

    def show_conversation_title(self, conversation: Conversation) -> None: ...


class PresetFeatures(QObject):
    def __init__(self, window: PresetHost) -> None:
        super().__init__(window.window())
        self._window = window
        self._actions = window.controller.presets
        self._shown: int | None = None  # the conversation the picker shows
        self.button = PresetButton()
        window.composer.add_to_footer(self.button)
        self.button.presetChosen.connect(self.choose)
        self.button.saveRequested.connect(self.save_current)
        self.button.updateRequested.connect(self._update)
        self.button.manageRequested.connect(self.open_manager)
        controller = window.controller
        controller.conversationOpened.connect(self._on_opened)
        controller.conversationChanged.connect(self._on_changed)
        controller.busyChanged.connect(self._on_busy)
        self._actions.presetsChanged.connect(self.refresh)

    @Slot()
    def refresh(self) -> None:
        """Show the open chat's preset, how it drifted, and the presets to choose from."""
        cid = self._shown
        state = self._actions.state(cid) if cid is not None else None
        presets = [(p.id, p.name) for p in self._actions.presets()]
        self.button.show_pick(
            pick_of(
                presets,
                state.preset_id if state else None,
                state.drift if state else (),
                self._actions.default_id(),
            )
        )

    @Slot(int)
    def choose(self, preset_id: int) -> None:
        """Give the open chat the preset (NO_PRESET: keep its settings, show none)."""
        window = self._window
        if window.current_conversation_id is None:
            window.new_chat()
        cid = window.current_conversation_id
        if cid is None:
            return
        model = self._actions.apply(cid, None if preset_id == NO_PRESET else preset_id)
        if model is not None:
            window.models.use(cid, model)
        window.token_counter.schedule()  # the system prompt and the overflow count
        try:
            window.show_conversation_title(window.store.get_conversation(cid))
        except StoreError as exc:
            window.show_notice(str(exc))

    @Slot()
    def save_current(self) -> None:
        """Name a new preset of the open chat's settings; the chat is then on it."""
        from ui.dialogs.preset_manager import SavePresetDialog  # imported when first used

        cid = self._window.current_conversation_id
        if cid is None:
            return
        ask = SavePresetDialog("", self._window.window())
        if ask.exec():
            self._actions.save_current(cid, ask.name.text(), ask.with_model.isChecked())

    @Slot()
    def open_manager(self) -> PresetManagerDialog:
        from ui.dialogs.preset_manager import PresetManagerDialog  # imported when first used

        dialog = PresetManagerDialog(self._actions, self._window.window())
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    @Slot(int)
    def _update(self, preset_id: int) -> None:
        cid = self._window.current_conversation_id
        if cid is not None:
            self._actions.update_from(preset_id, cid)

    @Slot(int)
    def _on_opened(self, conversation_id: int) -> None:
        self._shown = conversation_id
        self.refresh()

    @Slot(int)
    def _on_changed(self, conversation_id: int) -> None:
        if conversation_id == self._shown:
            self.refresh()

    @Slot(bool)
    def _on_busy(self, busy: bool) -> None:
        self.button.setEnabled(not busy)
        if busy:
            self.button.setToolTip(_BUSY_TIP)
        else:
            self.refresh()
