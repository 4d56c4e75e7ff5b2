"""Preferences › New chats: the preset, model, system prompt, sampling and knowledge every new chat
starts with (a preset chosen here comes first; a project's own model and preset come before it);
the knowledge rows are `knowledge_defaults`'.

A chat's own settings dialog changes one chat; these are what the next ones begin from (and what
its Restore Defaults puts back). The controller applies them (`ChatController.new_conversation`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QComboBox, QFormLayout, QPlainTextEdit, QVBoxLayout, QWidget

from app.chat.controller import DEFAULT_PARAMS
from ui.dialogs.knowledge_defaults import KnowledgeFields
from ui.forms.model_choices import fill_models
from ui.forms.sampling_fields import SamplingFields, add_hinted_row
from ui.text.plain_text import plain_label
from ui.widgets.scrolling_form import scrolling_form
from ui.widgets.theme import em

if TYPE_CHECKING:
    from app.library.entries import ModelInfo
    from app.settings import Preferences

LOADED_MODEL = "The model loaded at the time"
NO_PRESET = "None: the settings below"


@dataclass(frozen=True)
class ChatDefaults:
    model_id: str | None  # a library entry's id (`ModelInfo.id`); None: the model loaded then
    system_prompt: str
    params: dict[str, Any]  # over Branchwise's DEFAULT_PARAMS
    preset_id: int | None = None  # the preset new chats start from (over the rest)

    @classmethod
    def of(cls, preferences: Preferences) -> ChatDefaults:
        return cls(
            preferences.default_model_id,
            preferences.default_system_prompt,
            preferences.default_params,
            preferences.default_preset_id,
        )

    def save_to(self, preferences: Preferences) -> None:
        preferences.default_model_id = self.model_id
        preferences.default_system_prompt = self.system_prompt
        preferences.default_params = self.params
        preferences.default_preset_id = self.preset_id


class NewChatDefaultsPage(QWidget):
    def __init__(
        self,
        defaults: ChatDefaults,
        models: Sequence[ModelInfo],
        presets: Sequence[tuple[int, str]] = (),
        collections: Sequence[str] = (),
    ) -> None:
        """`presets`: (id, name) of each preset new chats may start from; `collections`: the
        knowledge the index holds, for new chats to read."""
        super().__init__()
        self.setObjectName("NewChatDefaults")
        self._before = defaults
        self.preset_box = QComboBox()
        self.preset_box.setToolTip(
            "New chats take this preset's settings over the ones below (a project's own "
            "preset comes first for its chats)"
        )
        self.preset_box.addItem(NO_PRESET, None)
        for preset_id, name in presets:
            self.preset_box.addItem(name, preset_id)
        self.preset_box.setCurrentIndex(max(0, self.preset_box.findData(defaults.preset_id)))
        self.model_box = QComboBox()
        self.model_box.setToolTip(
            "The model a new chat uses; the one loaded at the time unless you choose one here"
        )
        # A chosen model the library no longer holds stays listed (new chats take the loaded
        # model meanwhile), so the choice is not dropped unseen.
        fill_models(self.model_box, models, defaults.model_id, by_entry=True)
        self.model_box.insertItem(0, LOADED_MODEL, None)
        self.model_box.setCurrentIndex(max(0, self.model_box.findData(defaults.model_id)))

        self.system_prompt = QPlainTextEdit(defaults.system_prompt)
        self.system_prompt.setPlaceholderText("e.g. You are a concise assistant.")
        self.system_prompt.setToolTip("Instructions the model reads before each new conversation")
        self.system_prompt.setMinimumHeight(em(self, 3.5))
        self.system_prompt.setMaximumHeight(em(self, 6))

        self.sampling = SamplingFields()
        self.sampling.set_values(defaults.params)
        self.knowledge = KnowledgeFields(collections, defaults.params)

        intro = plain_label(
            "Every new chat starts with these; a chat's own settings (the sliders button) "
            "change that chat only."
        )
        intro.setObjectName("SettingsIntro")
        intro.setWordWrap(True)
        form = QFormLayout()
        if presets:  # none yet: the row would offer nothing
            add_hinted_row(form, "Start from preset", self.preset_box)
        add_hinted_row(form, "Default model", self.model_box)
        add_hinted_row(form, "Default system prompt", self.system_prompt)
        self.sampling.add_to(form)
        self.knowledge.add_to(form)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        self.fields = scrolling_form(form, self)
        layout.addWidget(self.fields, 1)

    def defaults(self) -> ChatDefaults:
        """The choices made here. Only sampling values that differ from Branchwise's own are
        kept, so a later change of those reaches every chat left at them; defaults this page
        does not show stay as they were."""
        shown = self.sampling.values()
        params = {k: v for k, v in self._before.params.items() if k not in shown}
        params.update({k: v for k, v in shown.items() if v != DEFAULT_PARAMS[k]})
        params = self.knowledge.applied_to(params)
        preset = self.preset_box.currentData()
        return ChatDefaults(
            self.model_box.currentData(),
            self.system_prompt.toPlainText(),
            params,
            preset if self.preset_box.count() > 1 else self._before.preset_id,
        )
