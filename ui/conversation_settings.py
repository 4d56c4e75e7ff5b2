"""Per-conversation settings: the model (from the library), the system prompt, the sampling
parameters and speculation (with the draft model). The dialog only collects values; the window
applies them through the controller."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.connections import is_remote, parse_remote
from app.controller import DEFAULT_PARAMS
from app.draft_choice import DRAFT_MODEL_KEY
from app.settings import DEFAULT_OVERFLOW
from ui.draft_model_choice import DraftModelBox
from ui.overflow_choice import overflow_box
from ui.plain_text import plain_label
from ui.theme import em, scale_font

if TYPE_CHECKING:
    from app.library import ModelInfo
    from app.store import Conversation

MAX_TOKENS_LIMIT = 1_000_000
_SEED_LIMIT = 2**31 - 1


@dataclass(frozen=True)
class ConversationSettings:
    # A library model's folder name (a loaded model's id), or a remote model id
    model_folder_name: str | None
    system_prompt: str
    params: dict[str, Any]


def _double(low: float, high: float, step: float, decimals: int, tip: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(low, high)
    box.setSingleStep(step)
    box.setDecimals(decimals)
    box.setToolTip(tip)
    return box


def _with_hint(field: QWidget | QHBoxLayout, hint: str) -> QWidget:
    """`field` with its one-line explanation under it, small and muted."""
    box = QWidget()
    column = QVBoxLayout(box)
    column.setContentsMargins(0, 0, 0, 0)
    column.setSpacing(2)
    if isinstance(field, QWidget):
        column.addWidget(field)
    else:
        column.addLayout(field)
    label = plain_label(hint)
    label.setObjectName("FieldHint")
    label.setWordWrap(True)
    scale_font(label, 0.85)
    column.addWidget(label)
    column.addStretch(1)  # spare height goes below the hint, never between it and its field
    return box


class ConversationSettingsDialog(QDialog):
    libraryRequested = Signal()

    def __init__(
        self,
        conversation: Conversation,
        models: Sequence[ModelInfo],
        current_model: str | None,
        parent: QWidget | None = None,
        default_overflow: str = DEFAULT_OVERFLOW,
        default_draft_for: Callable[[str], str | None] | None = None,
    ) -> None:
        """`default_overflow` is the policy from Preferences, shown when the chat has none;
        `default_draft_for(model)` the draft model Preferences keeps for a model, shown when
        the chat has chosen none of its own."""
        super().__init__(parent)
        self.setObjectName("ConversationSettingsDialog")
        self.setWindowTitle(f"Settings for “{conversation.title}”")
        self.setAccessibleName("Conversation settings")
        # Keys this dialog does not show (from an import, or a newer version) are kept.
        self._other_params = dict(conversation.params)
        params = {**DEFAULT_PARAMS, **conversation.params}
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
        self.set_models(models, current_model)
        self.model_box.currentIndexChanged.connect(self._show_drafts)

        self.system_prompt = QPlainTextEdit(conversation.system_prompt)
        self.system_prompt.setPlaceholderText("e.g. You are a concise assistant.")
        self.system_prompt.setToolTip("Instructions the model reads before the conversation")
        self.system_prompt.setMinimumHeight(em(self, 4))
        self.system_prompt.setMaximumHeight(em(self, 8))

        self.temperature = _double(0.0, 2.0, 0.05, 2, "0 always picks the likeliest token")
        self.top_p = _double(0.0, 1.0, 0.01, 2, "Sample from the smallest set of tokens whose "
                             "probabilities add up to this (1 = off)")
        self.top_k = QSpinBox()
        self.top_k.setRange(0, 1000)
        self.top_k.setSpecialValueText("off")
        self.top_k.setToolTip("Sample from this many likeliest tokens (0 = off)")
        self.min_p = _double(0.0, 1.0, 0.01, 2, "Drop tokens less likely than this share of the "
                             "likeliest one (0 = off)")
        self.repetition_penalty = _double(0.5, 2.0, 0.05, 2, "Above 1 discourages repeating "
                                          "recent tokens (1 = off)")
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(1, MAX_TOKENS_LIMIT)
        self.max_tokens.setSingleStep(64)
        self.max_tokens.setToolTip("The longest reply, in tokens")
        self.seed = QSpinBox()
        self.seed.setRange(-1, _SEED_LIMIT)
        self.seed.setSpecialValueText("random")
        self.seed.setToolTip("A fixed seed makes sampled replies repeatable (random = none)")
        self._default_overflow = default_overflow
        self.overflow = overflow_box(str(params.get("overflow", default_overflow)))
        self.speculation = QCheckBox("Draft ahead")
        self.speculation.setToolTip(
            "Guess upcoming tokens from the conversation and let the model check several at "
            "once: the same reply, often faster when it repeats text (rewrites, quotes, code)"
        )

        self.temperature.setValue(float(params["temperature"]))
        self.top_p.setValue(float(params["top_p"]))
        self.top_k.setValue(int(params["top_k"]))
        self.min_p.setValue(float(params["min_p"]))
        self.repetition_penalty.setValue(float(params["repetition_penalty"]))
        self.max_tokens.setValue(int(params["max_tokens"]))
        self.seed.setValue(-1 if params.get("seed") is None else int(params["seed"]))
        self.speculation.setChecked(params["speculation"] != "off")
        self.draft_model.setEnabled(self.speculation.isChecked())
        self.speculation.toggled.connect(self.draft_model.setEnabled)

        form = QFormLayout()
        for label, field in (
            ("Model", model_row),
            ("System prompt", self.system_prompt),
            ("Temperature", self.temperature),
            ("Top-p", self.top_p),
            ("Top-k", self.top_k),
            ("Min-p", self.min_p),
            ("Repetition penalty", self.repetition_penalty),
            ("Max tokens", self.max_tokens),
            ("Seed", self.seed),
            ("When it outgrows the context", self.overflow),
            ("Speculative decoding", self.speculation),
            ("Draft model", self.draft_model),
        ):
            shown = field if isinstance(field, QWidget) else self.model_box
            shown.setAccessibleName(label)
            form.addRow(QLabel(label), _with_hint(field, shown.toolTip()))
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        defaults = buttons.addButton(QDialogButtonBox.StandardButton.RestoreDefaults)
        defaults.setToolTip("Put the sampling parameters back to Branchwise's defaults")
        for button in buttons.buttons():
            button.setAccessibleName(button.text().replace("&", ""))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        defaults.clicked.connect(self.restore_defaults)
        intro = plain_label(
            "These settings apply to this chat only. New chats start from the defaults in "
            "Preferences."
        )
        intro.setObjectName("SettingsIntro")
        intro.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.setMinimumWidth(em(self, 26))

    def set_models(self, models: Sequence[ModelInfo], current: str | None) -> None:
        """Fill the model list and select `current`, a folder name (a loaded model's id), and
        the draft models offered for it."""
        self._models = list(models)
        wanted = current
        self.model_box.clear()
        for info in models:
            if info.problem is None:
                self.model_box.addItem(info.name, info.path.name)
                self.model_box.setItemData(
                    self.model_box.count() - 1,
                    f"{info.architecture} · {info.quantization}",
                    Qt.ItemDataRole.ToolTipRole,
                )
        if wanted is not None and self.model_box.findData(wanted) < 0:
            if is_remote(wanted):
                self.add_remote_models([wanted])
            else:
                self.model_box.addItem(f"{wanted} (not in the library)", wanted)
        index = self.model_box.findData(wanted) if wanted is not None else -1
        self.model_box.setCurrentIndex(index)
        self._show_drafts()

    def add_remote_models(self, model_ids: Sequence[str]) -> None:
        """Offer models on connected servers (`remote:<connection>/<model>` ids) after the
        library's; the selection stays."""
        for model_id in model_ids:
            if self.model_box.findData(model_id) < 0:
                remote = parse_remote(model_id)
                self.model_box.addItem(f"{remote.model} · on {remote.connection}", model_id)
                self.model_box.setItemData(
                    self.model_box.count() - 1,
                    f"A model on the server “{remote.connection}” (File › Connections)",
                    Qt.ItemDataRole.ToolTipRole,
                )

    def restore_defaults(self) -> None:
        self.temperature.setValue(DEFAULT_PARAMS["temperature"])
        self.top_p.setValue(DEFAULT_PARAMS["top_p"])
        self.top_k.setValue(DEFAULT_PARAMS["top_k"])
        self.min_p.setValue(DEFAULT_PARAMS["min_p"])
        self.repetition_penalty.setValue(DEFAULT_PARAMS["repetition_penalty"])
        self.max_tokens.setValue(DEFAULT_PARAMS["max_tokens"])
        self.seed.setValue(-1)
        self.overflow.setCurrentIndex(self.overflow.findData(self._default_overflow))
        self.speculation.setChecked(DEFAULT_PARAMS["speculation"] != "off")
        self._own_draft = False
        self._show_drafts()

    def settings(self) -> ConversationSettings:
        seed = self.seed.value()
        return ConversationSettings(
            model_folder_name=self.model_box.currentData(),
            system_prompt=self.system_prompt.toPlainText(),
            params={
                **{k: v for k, v in self._other_params.items() if k != DRAFT_MODEL_KEY},
                "temperature": round(self.temperature.value(), 4),
                "top_p": round(self.top_p.value(), 4),
                "top_k": self.top_k.value(),
                "min_p": round(self.min_p.value(), 4),
                "repetition_penalty": round(self.repetition_penalty.value(), 4),
                "max_tokens": self.max_tokens.value(),
                "seed": None if seed < 0 else seed,
                "overflow": self.overflow.currentData(),
                **self._speculation(),
            },
        )

    def _speculation(self) -> dict[str, Any]:
        """"off" when unticked (the chat's draft model is kept for when it is ticked again);
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
        else its model's default, selected."""
        main = self.model_box.currentData()
        if self._own_draft:
            chosen = self.draft_model.chosen() if self.draft_model.count() else (
                self._other_params.get(DRAFT_MODEL_KEY)
            )
        else:
            chosen = self._default_draft_for(main) if main else None
        self.draft_model.set_models(self._models, main, chosen)
