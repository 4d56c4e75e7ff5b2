"""Per-conversation settings: the preset they come from (filling the form from one, or saving it
as one), the model (from the library), the system prompt, the sampling parameters, the context
length, speculation (with the draft model) and how much of a message its knowledge excerpts may
take (which knowledge it reads is the composer's Knowledge button). The dialog only collects
values; the window applies them through the controller."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from app.chat.controller import DEFAULT_PARAMS
from app.chat.knowledge.choice import BUDGET_KEY, chat_budget
from app.chat.presets.bundle import PresetSettings
from app.library.draft_choice import DRAFT_MODEL_KEY
from app.remote.connections import is_remote
from app.settings import DEFAULT_OVERFLOW
from ui.forms.context_length_field import ContextLengthField
from ui.forms.draft_model_choice import DraftModelBox
from ui.forms.form_dialog import lay_out_form_dialog
from ui.forms.knowledge_budget import budget_box
from ui.forms.model_choices import add_remote_models, fill_models
from ui.forms.overflow_choice import overflow_box
from ui.forms.preset_choice import PresetChoice
from ui.forms.sampling_fields import SamplingFields, add_hinted_row
from ui.text.plain_text import plain_label
from ui.widgets.theme import em

if TYPE_CHECKING:
    from app.library.entries import ModelInfo
    from app.store.conversations import Conversation
    from app.store.presets import Preset

_SEED_LIMIT = 2**31 - 1
_REMOTE_DECODING = "A model on a remote server decodes as that server does: no drafting here"


@dataclass(frozen=True)
class ConversationSettings:
    # A library model's folder name (a loaded model's id), or a remote model id
    model_folder_name: str | None
    system_prompt: str
    params: dict[str, Any]
    preset_id: int | None = None  # the preset the settings came from (None: their own)


class ConversationSettingsDialog(QDialog):
    libraryRequested = Signal()
    presetSaveRequested = Signal()  # name a new preset of what the dialog shows

    def __init__(
        self,
        conversation: Conversation,
        models: Sequence[ModelInfo],
        current_model: str | None,
        parent: QWidget | None = None,
        default_overflow: str = DEFAULT_OVERFLOW,
        default_draft_for: Callable[[str], str | None] | None = None,
        defaults: Mapping[str, Any] | None = None,
        contexts: Mapping[str, int | None] | None = None,
        presets: Sequence[Preset] = (),
    ) -> None:
        """`default_overflow` is the policy from Preferences, shown when the chat has none;
        `default_draft_for(model)` the draft model Preferences keeps for a model, shown when
        the chat has chosen none of its own; `defaults` the params new chats start with
        (Preferences), which Restore Defaults puts back; `contexts` the context lengths of
        models the library does not describe (the loaded one), for the context length's hint;
        `presets` those the form can be filled from."""
        super().__init__(parent)
        self.setObjectName("ConversationSettingsDialog")
        self.setWindowTitle(f"Settings for “{conversation.title}”")
        self.setAccessibleName("Conversation settings")
        # Keys this dialog does not show (from an import, or a newer version) are kept.
        self._other_params = dict(conversation.params)
        params = {**DEFAULT_PARAMS, **conversation.params}
        self._defaults = {**DEFAULT_PARAMS, **(defaults or {})}
        self._contexts: dict[str, int | None] = dict(contexts or {})
        self._names: dict[str, str] = {}
        self._default_draft_for = default_draft_for or (lambda _model: None)
        # The chat's own draft model choice wins over its model's default; until the person
        # picks one here, the default follows the model chosen above.
        self._own_draft = DRAFT_MODEL_KEY in conversation.params
        self.draft_model = DraftModelBox()
        self.draft_model.activated.connect(self._on_draft_chosen)
        self._models: list[ModelInfo] = []

        self.model_box = QComboBox()
        self.model_box.setToolTip("The model this conversation uses; choosing another loads it")
        library = QPushButton("Library…")
        library.setAccessibleName("Model library")
        library.setToolTip("Import a GGUF file, add an MLX folder or download a model")
        library.clicked.connect(self.libraryRequested)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_box, 1)
        model_row.addWidget(library)

        self.system_prompt = QPlainTextEdit(conversation.system_prompt)
        self.system_prompt.setPlaceholderText("e.g. You are a concise assistant.")
        self.system_prompt.setToolTip("Instructions the model reads before the conversation")
        self.system_prompt.setMinimumHeight(em(self, 4))
        self.system_prompt.setMaximumHeight(em(self, 8))

        self.sampling = SamplingFields()
        self.sampling.set_values(params)
        self.seed = QSpinBox()
        self.seed.setRange(-1, _SEED_LIMIT)
        self.seed.setSpecialValueText("random")
        self.seed.setToolTip("A fixed seed makes sampled replies repeatable (random = none)")
        self.context_length = ContextLengthField(params.get("context_length"))
        self._default_overflow = default_overflow
        self.overflow = overflow_box(str(params.get("overflow", default_overflow)))
        self.speculation = QCheckBox("Draft ahead")
        self.speculation.setToolTip(
            "Guess upcoming tokens from the conversation and let the model check several at "
            "once: the same reply, often faster when it repeats text (rewrites, quotes, code)"
        )
        self.seed.setValue(-1 if params.get("seed") is None else int(params["seed"]))
        self.speculation.setChecked(params["speculation"] != "off")
        self.draft_model.setEnabled(self.speculation.isChecked())
        self.speculation.toggled.connect(self.draft_model.setEnabled)

        self.knowledge_budget = budget_box(chat_budget(params))
        self.preset = PresetChoice(presets, conversation.preset_id)
        self.preset.chosen.connect(self._fill_from_preset)
        self.preset.saveRequested.connect(self.presetSaveRequested)
        self._presets = {p.id: p for p in presets}
        form = QFormLayout()
        preset_row = add_hinted_row(form, "Preset", self.preset, self.preset.box)
        drift = self._drift(conversation)
        if drift:
            preset_row.hint.setText("Changed since the chat took it: " + "; ".join(drift))
        add_hinted_row(form, "Model", model_row, self.model_box)
        add_hinted_row(form, "System prompt", self.system_prompt)
        self.sampling.add_to(form)
        add_hinted_row(form, "Seed", self.seed)
        self._context_row = add_hinted_row(form, "Context length", self.context_length)
        add_hinted_row(form, "When it outgrows the context", self.overflow)
        self._drafting_rows = {
            self.speculation: add_hinted_row(form, "Speculative decoding", self.speculation),
            self.draft_model: add_hinted_row(form, "Draft model", self.draft_model),
        }
        self._drafting_tips = {field: field.toolTip() for field in self._drafting_rows}
        add_hinted_row(form, "Knowledge per message", self.knowledge_budget)
        self.set_models(models, current_model)
        self.model_box.currentIndexChanged.connect(self._show_context_hint)
        self.model_box.currentIndexChanged.connect(self._show_drafts)
        self.error = plain_label()
        self.error.setObjectName("SettingsError")
        self.error.setWordWrap(True)
        self.error.hide()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        defaults_button = buttons.addButton(QDialogButtonBox.StandardButton.RestoreDefaults)
        defaults_button.setToolTip(
            "Put the sampling parameters back to the defaults for new chats (Preferences › "
            "New chats), and the context length to the model's maximum"
        )
        for button in buttons.buttons():
            button.setAccessibleName(button.text().replace("&", ""))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        defaults_button.clicked.connect(self.restore_defaults)
        intro = (
            "These settings apply to this chat only. New chats start from the defaults in "
            "Preferences."
        )
        lay_out_form_dialog(self, intro, form, (self.error, buttons), 26)

    def accept(self) -> None:
        """Refuse a context length the engine could not use, saying why, instead of closing."""
        problem = self.context_length.problem()
        if problem is not None:
            self.error.setText(problem)
            self.error.show()
            self.context_length.setFocus()
            return
        super().accept()

    def set_models(self, models: Sequence[ModelInfo], current: str | None) -> None:
        """Fill the model list and select `current`, a folder name (a loaded model's id), and
        the draft models offered for it."""
        self._models = list(models)
        for info in models:
            self._contexts[info.path.name] = info.context_length
            self._names[info.path.name] = info.name
        fill_models(self.model_box, models, current)
        self._show_context_hint()
        self._show_drafts()

    def _show_context_hint(self) -> None:
        """The context length's hint names the chosen model's own maximum, when known."""
        model_id = self.model_box.currentData()
        self._context_row.hint.setText(
            ContextLengthField.hint(
                self._names.get(model_id, model_id), self._contexts.get(model_id)
            )
        )

    def add_remote_models(self, model_ids: Sequence[str]) -> None:
        """Offer models on connected servers (`remote:<connection>/<model>` ids) after the
        library's; the selection stays."""
        add_remote_models(self.model_box, model_ids)

    def restore_defaults(self) -> None:
        """Back to what a new chat starts with (Preferences), the model and prompt aside."""
        defaults = self._defaults
        self.sampling.set_values(defaults)
        self.seed.setValue(-1 if defaults.get("seed") is None else int(defaults["seed"]))
        self.context_length.set_limit(None)
        self.overflow.setCurrentIndex(self.overflow.findData(self._default_overflow))
        self.speculation.setChecked(defaults["speculation"] != "off")
        self.knowledge_budget.setValue(chat_budget(defaults))
        self._own_draft = False
        self._show_drafts()

    def settings(self) -> ConversationSettings:
        seed = self.seed.value()
        budget = self.knowledge_budget.value()  # 0: a quarter of the context, kept as no key
        params = {
            **{
                k: v
                for k, v in self._other_params.items()
                if k not in (DRAFT_MODEL_KEY, BUDGET_KEY)
            },
            **self.sampling.values(),
            "seed": None if seed < 0 else seed,
            "overflow": self.overflow.currentData(),
            **self._speculation(),
            **({BUDGET_KEY: budget} if budget > 0 else {}),
        }
        params.pop("context_length", None)
        limit = self.context_length.limit()
        if limit is not None:
            params["context_length"] = limit
        return ConversationSettings(
            model_folder_name=self.model_box.currentData(),
            system_prompt=self.system_prompt.toPlainText(),
            params=params,
            preset_id=self.preset.current(),
        )

    def _drift(self, conversation: Conversation) -> tuple[str, ...]:
        """How the chat has drifted from the preset it started from (none: ())."""
        preset = self._presets.get(conversation.preset_id or -1)
        if preset is None:
            return ()
        meaning = {**self._defaults, "overflow": self._default_overflow}
        return PresetSettings.from_json(preset.settings).drift(conversation, meaning)

    def add_preset(self, preset: Preset) -> None:
        """A preset just saved from this dialog: listed, and chosen."""
        self._presets[preset.id] = preset
        self.preset.add(preset)

    def _fill_from_preset(self, preset_id: int) -> None:
        """Show what the chat would be on the preset: its settings, the new-chat defaults for
        those it leaves unset, the chat's other params as they are."""
        settings = PresetSettings.from_json(self._presets[preset_id].settings)
        params = settings.applied_to(self.settings().params, self._defaults)
        self._other_params = dict(params)
        self.system_prompt.setPlainText(settings.system_prompt)
        self.sampling.set_values(params)
        self.seed.setValue(-1 if params.get("seed") is None else int(params["seed"]))
        self.context_length.set_limit(params.get("context_length"))
        policy = params.get("overflow", self._default_overflow)
        self.overflow.setCurrentIndex(max(0, self.overflow.findData(policy)))
        self.speculation.setChecked(params.get("speculation") != "off")
        self.knowledge_budget.setValue(chat_budget(params))
        self._own_draft = DRAFT_MODEL_KEY in params
        if settings.model_id is not None and self.model_box.findData(settings.model_id) >= 0:
            self.model_box.setCurrentIndex(self.model_box.findData(settings.model_id))
        self.draft_model.clear()  # the draft list is made again for the chosen one
        self._show_drafts()

    def _speculation(self) -> dict[str, Any]:
        """ "off" when unticked (the chat's draft model is kept for when it is ticked again);
        "draft" with the chat's own draft model; else prompt lookup, where a model default
        from Preferences still applies."""
        own = {DRAFT_MODEL_KEY: self.draft_model.chosen()} if self._own_draft else {}
        if not self.speculation.isChecked():
            return {"speculation": "off", **own}
        drafting = self._own_draft and self.draft_model.chosen() is not None
        return {"speculation": "draft" if drafting else "prompt_lookup", **own}

    def _on_draft_chosen(self) -> None:
        self._own_draft = True

    def _show_drafts(self) -> None:
        """Offer every library model but the chat's as its draft, with the chat's own choice,
        else its model's default, selected. A model on a remote server decodes as that server
        does: both choices are off there, saying so."""
        main = self.model_box.currentData()
        remote = is_remote(main)
        self.speculation.setEnabled(not remote)
        self.draft_model.setEnabled(not remote and self.speculation.isChecked())
        for field, row in self._drafting_rows.items():
            tip = _REMOTE_DECODING if remote else self._drafting_tips[field]
            field.setToolTip(tip)
            row.hint.setText("" if remote and field is self.draft_model else tip)  # said once
        if self._own_draft:
            chosen = (
                self.draft_model.chosen()
                if self.draft_model.count()
                else (self._other_params.get(DRAFT_MODEL_KEY))
            )
        else:
            chosen = self._default_draft_for(main) if main else None
        self.draft_model.set_models(self._models, main, chosen)
