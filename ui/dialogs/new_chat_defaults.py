"""Preferences › New chats: the model, system prompt, sampling and knowledge every new chat starts
with, and how much of a message's prompt its knowledge excerpts may take.

A chat's own settings dialog changes one chat; these are what the next ones begin from (and what
its Restore Defaults puts back). The controller applies them (`ChatController.new_conversation`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.chat.controller import DEFAULT_PARAMS
from ui.forms.model_choices import fill_models
from ui.forms.sampling_fields import SamplingFields, add_hinted_row
from ui.text.plain_text import plain_label
from ui.widgets.theme import em

if TYPE_CHECKING:
    from app.library.entries import ModelInfo
    from app.settings import Preferences

LOADED_MODEL = "The model loaded at the time"
QUARTER = "A quarter of the chat's context"
_MAX_BUDGET = 262_144


@dataclass(frozen=True)
class ChatDefaults:
    model_id: str | None  # a library entry's id (`ModelInfo.id`); None: the model loaded then
    system_prompt: str
    params: dict[str, Any]  # over Branchwise's DEFAULT_PARAMS
    knowledge: tuple[str, ...] = ()  # the collections a new chat reads
    knowledge_budget: int = 0  # tokens of excerpts per message; 0: a quarter of the context

    @classmethod
    def of(cls, preferences: Preferences) -> ChatDefaults:
        return cls(
            preferences.default_model_id,
            preferences.default_system_prompt,
            preferences.default_params,
            tuple(preferences.default_knowledge),
            preferences.knowledge_budget_tokens,
        )

    def save_to(self, preferences: Preferences) -> None:
        preferences.default_model_id = self.model_id
        preferences.default_system_prompt = self.system_prompt
        preferences.default_params = self.params
        preferences.default_knowledge = list(self.knowledge)
        preferences.knowledge_budget_tokens = self.knowledge_budget


class NewChatDefaultsPage(QWidget):
    def __init__(
        self, defaults: ChatDefaults, models: Sequence[ModelInfo], collections: Sequence[str] = ()
    ) -> None:
        """`collections`: the knowledge the index holds, for new chats to read."""
        super().__init__()
        self.setObjectName("NewChatDefaults")
        self._before = defaults
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
        self.knowledge = _knowledge_list(collections, defaults.knowledge)
        self.knowledge_budget = QSpinBox()
        self.knowledge_budget.setRange(0, _MAX_BUDGET)
        self.knowledge_budget.setSingleStep(256)
        self.knowledge_budget.setSuffix(" tokens")
        self.knowledge_budget.setSpecialValueText(QUARTER)
        self.knowledge_budget.setValue(defaults.knowledge_budget)
        self.knowledge_budget.setToolTip(
            "The most a message's knowledge excerpts take of the prompt, in the chat model's "
            "tokens (every chat)"
        )

        intro = plain_label(
            "Every new chat starts with these; a chat's own settings (the sliders button) "
            "change that chat only."
        )
        intro.setObjectName("SettingsIntro")
        intro.setWordWrap(True)
        form = QFormLayout()
        add_hinted_row(form, "Default model", self.model_box)
        add_hinted_row(form, "Default system prompt", self.system_prompt)
        self.sampling.add_to(form)
        add_hinted_row(form, "Knowledge", self.knowledge)
        add_hinted_row(form, "Knowledge per message", self.knowledge_budget)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addStretch(1)

    def defaults(self) -> ChatDefaults:
        """The choices made here. Only sampling values that differ from Branchwise's own are
        kept, so a later change of those reaches every chat left at them; defaults this page
        does not show stay as they were."""
        shown = self.sampling.values()
        params = {k: v for k, v in self._before.params.items() if k not in shown}
        params.update({k: v for k, v in shown.items() if v != DEFAULT_PARAMS[k]})
        items = [self.knowledge.item(i) for i in range(self.knowledge.count())]
        chosen = tuple(
            str(item.data(Qt.ItemDataRole.UserRole))
            for item in items
            if item.checkState() == Qt.CheckState.Checked
        )
        return ChatDefaults(
            self.model_box.currentData(),
            self.system_prompt.toPlainText(),
            params,
            chosen,
            self.knowledge_budget.value(),
        )


def _knowledge_list(collections: Sequence[str], chosen: Sequence[str]) -> QListWidget:
    """The collections a new chat may read, those it reads checked (a chosen one removed since
    stays listed, marked, so the choice is not dropped unseen)."""
    box = QListWidget()
    box.setObjectName("DefaultKnowledge")
    box.setAccessibleName("Knowledge new chats read")
    box.setToolTip("The knowledge collections a new chat searches with each message")
    for name in dict.fromkeys([*collections, *chosen]):
        shown = name if name in collections else f"{name} (removed)"
        item = QListWidgetItem(shown)  # item text is never read as HTML
        item.setData(Qt.ItemDataRole.UserRole, name)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        checked = Qt.CheckState.Checked if name in chosen else Qt.CheckState.Unchecked
        item.setCheckState(checked)
        box.addItem(item)
    if box.count() == 0:
        empty = QListWidgetItem("No knowledge folders yet.")
        empty.setFlags(Qt.ItemFlag.NoItemFlags)
        box.addItem(empty)
    box.setMaximumHeight(em(box, 6))
    return box
