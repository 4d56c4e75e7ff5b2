"""Presets, managed: the list (the one new chats start from marked), what the chosen one holds,
rename, duplicate, delete, use for new chats, and LM Studio's preset files imported (with what
they could not carry said by name); and the small dialog that names a new preset.

The manager acts at once through the controller's preset actions and lists them again when
they say presets changed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.chat.presets.bundle import PARAM_LABELS, PresetSettings
from ui.dialogs.delete_confirmation import delete_confirmed
from ui.text.plain_text import message_box, plain_label
from ui.widgets.theme import em

if TYPE_CHECKING:
    from app.chat.presets.actions import PresetActions
    from app.store.presets import Preset

# Where LM Studio keeps its presets: the import's file dialog opens there when it exists.
LMSTUDIO_PRESETS = Path.home() / ".lmstudio" / "config-presets"
_PROMPT_SHOWN = 400


def describe(preset: Preset) -> str:
    """What a preset holds, a line a setting, for the person."""
    settings = PresetSettings.from_json(preset.settings)
    prompt = settings.system_prompt.strip()
    if len(prompt) > _PROMPT_SHOWN:
        prompt = prompt[:_PROMPT_SHOWN] + "…"
    lines = [f"System prompt: {prompt}" if prompt else "System prompt: none"]
    if settings.model_id:
        lines.append(f"Model: {settings.model_id}")
    for key, label in PARAM_LABELS.items():
        if key in settings.params:
            value = settings.params[key]
            shown = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
            lines.append(f"{label[:1].upper()}{label[1:]}: {shown}")
    return "\n".join(lines)


class SavePresetDialog(QDialog):
    """The name of a new preset, and whether it keeps the chat's model."""

    def __init__(self, suggested: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("SavePresetDialog")
        self.setWindowTitle("Save as preset")
        self.name = QLineEdit(suggested)
        self.name.setAccessibleName("Preset name")
        self.name.selectAll()
        self.with_model = QCheckBox("Switch to this chat's model too")
        self.with_model.setToolTip("Unticked: a chat keeps its own model when it takes the preset")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.name.textChanged.connect(
            lambda text: buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(
                bool(text.strip())
            )
        )
        layout = QVBoxLayout(self)
        layout.addWidget(
            plain_label(
                "Save this chat's settings (system prompt, sampling, "
                "context, drafting, thinking, tools) under a name:"
            )
        )
        layout.addWidget(self.name)
        layout.addWidget(self.with_model)
        layout.addWidget(buttons)
        self.setMinimumWidth(em(self, 24))


class PresetManagerDialog(QDialog):
    def __init__(self, actions: PresetActions, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("PresetManagerDialog")
        self.setWindowTitle("Presets")
        self.setAccessibleName("Presets")
        self._actions = actions
        self.list = QListWidget()
        self.list.setAccessibleName("Presets")
        self.details = QLabel()
        self.details.setObjectName("PresetDetails")
        self.details.setTextFormat(Qt.TextFormat.PlainText)
        self.details.setWordWrap(True)
        self.details.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.details.setMinimumWidth(em(self, 18))
        self.rename_button = QPushButton("Rename…")
        self.duplicate_button = QPushButton("Duplicate")
        self.delete_button = QPushButton("Delete…")
        self.default_button = QPushButton("Use for New Chats")
        self.default_button.setCheckable(True)
        self.default_button.setToolTip("New chats start from this preset (else Preferences)")
        self.import_button = QPushButton("Import from LM Studio…")
        self.import_button.setToolTip("Read LM Studio preset files (its config-presets folder)")
        side = QVBoxLayout()
        for button in (
            self.rename_button,
            self.duplicate_button,
            self.delete_button,
            self.default_button,
        ):
            side.addWidget(button)
        side.addStretch(1)
        side.addWidget(self.import_button)
        row = QHBoxLayout()
        row.addWidget(self.list, 1)
        row.addWidget(self.details, 2)
        row.addLayout(side)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        intro = plain_label(
            "A preset is a chat's settings under a name. Choose one for a chat by the composer "
            "or in the chat's settings; a chat shows when it has drifted from its preset."
        )
        intro.setObjectName("SettingsIntro")
        intro.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(row, 1)
        layout.addWidget(close)
        self.resize(em(self, 46), em(self, 22))
        self.list.currentRowChanged.connect(self._show_current)
        self.rename_button.clicked.connect(self.rename)
        self.duplicate_button.clicked.connect(self._duplicate)
        self.delete_button.clicked.connect(self._delete)
        self.default_button.clicked.connect(self._set_default)
        self.import_button.clicked.connect(self.ask_import)
        actions.presetsChanged.connect(self.refresh)
        self.refresh()

    @Slot()
    def refresh(self) -> None:
        chosen = self.current()
        default = self._actions.default_id()
        self.list.clear()
        for preset in self._actions.presets():
            mark = "  · new chats" if preset.id == default else ""
            item = QListWidgetItem(preset.name + mark)
            item.setData(Qt.ItemDataRole.UserRole, preset.id)
            self.list.addItem(item)
            if chosen is not None and preset.id == chosen.id:
                self.list.setCurrentItem(item)
        if self.list.currentRow() < 0 and self.list.count():
            self.list.setCurrentRow(0)
        self._show_current()

    def current(self) -> Preset | None:
        item = self.list.currentItem()
        if item is None:
            return None
        preset_id = item.data(Qt.ItemDataRole.UserRole)
        return next((p for p in self._actions.presets() if p.id == preset_id), None)

    def select(self, preset_id: int) -> None:
        for row in range(self.list.count()):
            if self.list.item(row).data(Qt.ItemDataRole.UserRole) == preset_id:
                self.list.setCurrentRow(row)

    @Slot()
    def _show_current(self) -> None:
        preset = self.current()
        for button in (self.rename_button, self.duplicate_button, self.delete_button):
            button.setEnabled(preset is not None)
        self.default_button.setEnabled(preset is not None)
        self.default_button.setChecked(
            preset is not None and preset.id == self._actions.default_id()
        )
        self.details.setText(
            describe(preset) if preset else "No presets yet: save a chat's settings as one."
        )

    @Slot()
    def rename(self) -> None:
        preset = self.current()
        if preset is None:
            return
        name, ok = QInputDialog.getText(
            self, "Rename preset", "New name:", QLineEdit.EchoMode.Normal, preset.name
        )
        if ok and name.strip():
            self._actions.rename(preset.id, name)

    def _duplicate(self) -> None:
        preset = self.current()
        copy = self._actions.duplicate(preset.id) if preset else None
        if copy is not None:
            self.select(copy.id)

    def _delete(self) -> None:
        preset = self.current()
        if preset is not None and delete_confirmed(
            self,
            "ConfirmDeletePreset",
            "Delete preset",
            f"Delete the preset “{preset.name}”?",
            "Chats that started from it keep their settings.",
            "Delete preset",
        ):
            self._actions.delete(preset.id)

    def _set_default(self, on: bool) -> None:
        preset = self.current()
        self._actions.set_default(preset.id if preset is not None and on else None)

    @Slot()
    def ask_import(self) -> None:
        folder = LMSTUDIO_PRESETS if LMSTUDIO_PRESETS.is_dir() else Path.home()
        paths, _filter = QFileDialog.getOpenFileNames(
            self, "Import LM Studio presets", str(folder), "LM Studio presets (*.json)"
        )
        if paths:
            self.import_files([Path(p) for p in paths])

    def import_files(self, paths: list[Path]) -> None:
        done = self._actions.import_lmstudio(paths)
        made = [item.preset for item in done if item.preset is not None]
        if made:
            self.select(made[-1].id)
        refused = any(item.preset is None for item in done)
        box = message_box(
            self,
            QMessageBox.Icon.Warning if refused else QMessageBox.Icon.Information,
            "Import LM Studio presets",
            f"Imported {len(made)} of {len(done)} preset files.",
            "\n".join(f"{Path(item.path).name}: {item.message}" for item in done),
        )
        box.setObjectName("PresetImportReport")
        box.open()
