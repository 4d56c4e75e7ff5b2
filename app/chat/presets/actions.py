"""The person's actions on presets, for the chat controller: save a chat's settings as a
preset, give a chat a preset (or take it back to none), update a preset from a chat, rename,
duplicate and delete presets, choose the one new chats start from, import LM Studio's preset
files; and where a chat stands against its preset (`state`: which one, and what has drifted).

Like the controller's other parts it knows no controller: it is given the store and the
preferences and says what changed by its own signals.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.chat.new_chat import new_chat_params
from app.chat.presets.bundle import PresetSettings
from app.chat.presets.lmstudio import PresetFileError, read_lmstudio_preset
from app.chat.store_guard import guarded
from app.settings import Preferences
from app.store.conversations import Store, StoreError
from app.store.presets import Preset, free_name


@dataclass(frozen=True)
class PresetState:
    """A chat against the preset it started from: the preset (None: none, or deleted since)
    and what differs from it, one phrase per setting (empty: it matches)."""

    conversation_id: int
    preset_id: int | None
    name: str = ""
    drift: tuple[str, ...] = ()


@dataclass(frozen=True)
class PresetImport:
    """One LM Studio file imported: the preset made (None: refused), what it says for the
    person, and what it could not carry, by name."""

    path: str
    preset: Preset | None
    message: str
    left_out: tuple[str, ...] = ()


class PresetActions(QObject):
    notice = Signal(str)
    presetsChanged = Signal()  # the list of presets, a name or the default changed
    conversationChanged = Signal(int)  # a chat's settings or its preset changed
    conversationsChanged = Signal()

    def __init__(self, store: Store, preferences: Preferences, parent: QObject | None = None):
        super().__init__(parent)
        self._store = store
        self._preferences = preferences

    def presets(self) -> list[Preset]:
        return self._guard(self._store.list_presets) or []

    def state(self, conversation_id: int) -> PresetState:
        """Which preset the chat started from, and how it has drifted."""

        try:  # read often (each time a chat is shown): a refusal shows as no preset
            chat = self._store.get_conversation(conversation_id)
            if chat.preset_id is None:
                return PresetState(conversation_id, None)
            preset = self._store.get_preset(chat.preset_id)
        except StoreError:
            return PresetState(conversation_id, None)
        meaning = {**self._defaults(), "overflow": self._preferences.overflow_policy}
        drift = PresetSettings.from_json(preset.settings).drift(chat, meaning)
        return PresetState(conversation_id, preset.id, preset.name, drift)

    def save_current(
        self, conversation_id: int, name: str, with_model: bool = False
    ) -> Preset | None:
        """A new preset of the chat's settings (its model too, with `with_model`); the chat
        is then on that preset."""

        def save() -> Preset:
            chat = self._store.get_conversation(conversation_id)
            settings = PresetSettings.of_chat(chat, with_model)
            preset = self._store.create_preset(name, settings.to_json())
            self._store.set_conversation_preset(conversation_id, preset.id)
            return preset

        preset = self._guard(save)
        if preset is not None:
            self.presetsChanged.emit()
            self.conversationChanged.emit(conversation_id)
        return preset

    def create(self, name: str, settings: PresetSettings) -> Preset | None:
        """A new preset of `settings` (a chat's settings dialog saves what it shows)."""
        preset = self._guard(lambda: self._store.create_preset(name, settings.to_json()))
        if preset is not None:
            self.presetsChanged.emit()
        return preset

    def mark(self, conversation_id: int, preset_id: int | None) -> None:
        """Record the preset the chat's settings came from, its settings as they are."""
        self._guard(lambda: self._store.set_conversation_preset(conversation_id, preset_id))
        self.conversationChanged.emit(conversation_id)

    def update_from(self, preset_id: int, conversation_id: int) -> None:
        """Make the preset what the chat is now (its model kept only if the preset had one)."""

        def update() -> Preset:
            chat = self._store.get_conversation(conversation_id)
            had_model = PresetSettings.from_json(self._store.get_preset(preset_id).settings)
            settings = PresetSettings.of_chat(chat, had_model.model_id is not None)
            return self._store.update_preset(preset_id, settings.to_json())

        if self._guard(update) is not None:
            self.presetsChanged.emit()
            self.conversationChanged.emit(conversation_id)

    def apply(self, conversation_id: int, preset_id: int | None) -> str | None:
        """Give the chat the preset's settings (None: keep them, and show no preset). Returns
        the model the preset names, for the window to switch to (None: the chat keeps its)."""

        if preset_id is None:
            self.mark(conversation_id, None)
            return None

        def take() -> str | None:
            chat = self._store.get_conversation(conversation_id)
            settings = PresetSettings.from_json(self._store.get_preset(preset_id).settings)
            self._store.update_settings(
                conversation_id,
                system_prompt=settings.system_prompt,
                params=settings.applied_to(chat.params, self._defaults()),
            )
            self._store.set_conversation_preset(conversation_id, preset_id)
            return settings.model_id

        model_id = self._guard(take)
        self.conversationChanged.emit(conversation_id)
        return model_id

    def rename(self, preset_id: int, name: str) -> bool:
        renamed = self._guard(lambda: self._store.rename_preset(preset_id, name)) is not None
        if renamed:
            self.presetsChanged.emit()
        return renamed

    def duplicate(self, preset_id: int) -> Preset | None:
        copy = self._guard(lambda: self._store.duplicate_preset(preset_id))
        if copy is not None:
            self.presetsChanged.emit()
        return copy

    def delete(self, preset_id: int) -> None:
        """Chats that started from it keep their settings and show no preset."""
        self._guard(lambda: self._store.delete_preset(preset_id))
        if self._preferences.default_preset_id == preset_id:
            self._preferences.default_preset_id = None
        self.presetsChanged.emit()
        self.conversationsChanged.emit()

    def set_default(self, preset_id: int | None) -> None:
        """The preset new chats start from (None: Preferences › New chats)."""
        self._preferences.default_preset_id = preset_id
        self.presetsChanged.emit()

    def default_id(self) -> int | None:
        chosen = self._preferences.default_preset_id
        return chosen if any(p.id == chosen for p in self.presets()) else None

    def import_lmstudio(self, paths: Sequence[Path]) -> list[PresetImport]:
        """Each LM Studio preset file as a new preset (a name already taken gets a number)."""
        done: list[PresetImport] = []
        for path in paths:
            try:
                read = read_lmstudio_preset(path)
                taken = {p.name.casefold() for p in self._store.list_presets()}
                name = free_name(read.name, taken)
                preset = self._store.create_preset(name, read.settings.to_json())
            except (PresetFileError, StoreError) as exc:
                done.append(PresetImport(str(path), None, str(exc)))
                continue
            message = f"Imported “{preset.name}”."
            if read.left_out:
                message += " Not carried: " + ", ".join(read.left_out) + "."
            done.append(PresetImport(str(path), preset, message, read.left_out))
        if any(item.preset for item in done):
            self.presetsChanged.emit()
        return done

    def _defaults(self) -> dict[str, object]:
        return new_chat_params(self._preferences.default_params)

    def _guard[T](self, action: Callable[[], T]) -> T | None:
        return guarded(self.notice, action)
