"""A project's settings: its name, its instructions (first in the system prompt of each of its
chats), the model and preset its new chats start with, the tools they may use, and the knowledge
collections they read by default. The dialog only collects values (`fields()`); the window
applies them through the controller."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.store.project_records import ProjectFields
from ui.forms.form_dialog import lay_out_form_dialog
from ui.forms.model_choices import fill_models
from ui.forms.sampling_fields import add_hinted_row
from ui.widgets.theme import em

if TYPE_CHECKING:
    from app.library.entries import ModelInfo
    from app.store.presets import Preset

NEW_CHAT_MODEL = "As new chats start (Preferences)"
NO_PRESET = "None: the defaults for new chats"
_INSTRUCTIONS_TIP = (
    "Placed first in the system prompt of each of this project's chats, exactly the same in "
    "each, so the model reads them once for all of them. An edit applies to new turns; replies "
    "already written keep the instructions they were asked with"
)


class ProjectSettingsDialog(QDialog):
    def __init__(
        self,
        fields: ProjectFields,
        models: Sequence[ModelInfo],
        presets: Sequence[Preset],
        tool_servers: Sequence[tuple[str, str]],
        parent: QWidget | None = None,
        new: bool = False,
    ) -> None:
        """`fields`: what the project has now (a new one's defaults); `tool_servers`: (name,
        label) of each tool server the app knows."""
        super().__init__(parent)
        self.setObjectName("ProjectSettingsDialog")
        self.setWindowTitle("New project" if new else f"Project “{fields.name}”")
        self.setAccessibleName("Project settings")
        self.name = QLineEdit(fields.name)
        self.name.setPlaceholderText("e.g. Thesis")
        self.name.setToolTip("The project's name in the sidebar")
        self.instructions = QPlainTextEdit(fields.instructions)
        self.instructions.setPlaceholderText("e.g. You help me write my thesis on soil ecology.")
        self.instructions.setToolTip(_INSTRUCTIONS_TIP)
        self.instructions.setMinimumHeight(em(self, 7))

        self.model_box = QComboBox()
        self.model_box.setToolTip("The model new chats in this project use")
        fill_models(self.model_box, models, fields.model_id)
        self.model_box.insertItem(0, NEW_CHAT_MODEL, None)
        self.model_box.setCurrentIndex(max(0, self.model_box.findData(fields.model_id)))

        self.preset_box = QComboBox()
        self.preset_box.setToolTip("The preset new chats in this project start from")
        self.preset_box.addItem(NO_PRESET, None)
        for preset in presets:
            self.preset_box.addItem(preset.name, preset.id)
        self.preset_box.setCurrentIndex(max(0, self.preset_box.findData(fields.preset_id)))

        self.own_tools = QCheckBox("Choose the tools this project's chats may use")
        self.own_tools.setToolTip(
            "Unticked: they get the tools new chats get (Preferences › Tools)"
        )
        self.own_tools.setChecked(fields.tool_servers is not None)
        self.tools = QListWidget()
        self.tools.setAccessibleName("Tool servers")
        self.tools.setMaximumHeight(em(self, 6))
        chosen = set(fields.tool_servers or ())
        for name, label in tool_servers:
            item = QListWidgetItem(label)
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setCheckState(Qt.CheckState.Checked if name in chosen else Qt.CheckState.Unchecked)
            self.tools.addItem(item)
        self.tools.setEnabled(self.own_tools.isChecked())
        self.own_tools.toggled.connect(self.tools.setEnabled)

        self.knowledge = QListWidget()
        self.knowledge.setAccessibleName("Knowledge collections")
        self.knowledge.setToolTip(
            "The knowledge collections this project's chats read by default, by name"
        )
        self.knowledge.setMaximumHeight(em(self, 5))
        self.knowledge.addItems(list(fields.knowledge))
        self.knowledge_name = QLineEdit()
        self.knowledge_name.setPlaceholderText("A collection's name")
        add = QPushButton("Add")
        remove = QPushButton("Remove")
        for button in (add, remove):
            button.setAccessibleName(f"{button.text()} knowledge collection")
        add.clicked.connect(self._add_knowledge)
        self.knowledge_name.returnPressed.connect(self._add_knowledge)
        remove.clicked.connect(self._remove_knowledge)
        knowledge_row = QHBoxLayout()
        knowledge_row.addWidget(self.knowledge_name, 1)
        knowledge_row.addWidget(add)
        knowledge_row.addWidget(remove)
        knowledge = QWidget()
        knowledge_column = QVBoxLayout(knowledge)
        knowledge_column.setContentsMargins(0, 0, 0, 0)
        knowledge_column.addWidget(self.knowledge)
        knowledge_column.addLayout(knowledge_row)

        form = QFormLayout()
        add_hinted_row(form, "Name", self.name)
        add_hinted_row(form, "Instructions", self.instructions)
        add_hinted_row(form, "Model", self.model_box)
        add_hinted_row(form, "Preset", self.preset_box)
        tools = QWidget()
        tools_column = QVBoxLayout(tools)
        tools_column.setContentsMargins(0, 0, 0, 0)
        tools_column.addWidget(self.own_tools)
        tools_column.addWidget(self.tools)
        add_hinted_row(form, "Tools", tools, self.own_tools)
        add_hinted_row(form, "Knowledge", knowledge, self.knowledge)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.save_button = buttons.addButton(
            "Create project" if new else "Save", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.save_button.setDefault(True)
        for button in buttons.buttons():
            button.setAccessibleName(button.text().replace("&", ""))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.name.textChanged.connect(self._check_name)
        intro = (
            "A project's chats start with its instructions, model, preset and tools; chats "
            "move in and out from the sidebar."
        )
        lay_out_form_dialog(self, intro, form, (buttons,), 32)
        self._check_name()

    def fields(self) -> ProjectFields:
        """What the dialog holds now."""
        servers = None
        if self.own_tools.isChecked():
            servers = tuple(
                str(self.tools.item(i).data(Qt.ItemDataRole.UserRole))
                for i in range(self.tools.count())
                if self.tools.item(i).checkState() == Qt.CheckState.Checked
            )
        preset = self.preset_box.currentData()
        return ProjectFields(
            self.name.text().strip(),
            self.instructions.toPlainText(),
            self.model_box.currentData(),
            None if preset is None else int(preset),
            servers,
            tuple(self.knowledge.item(i).text() for i in range(self.knowledge.count())),
        )

    def _check_name(self) -> None:
        self.save_button.setEnabled(bool(self.name.text().strip()))

    def _add_knowledge(self) -> None:
        name = self.knowledge_name.text().strip()
        names = {self.knowledge.item(i).text() for i in range(self.knowledge.count())}
        if name and name not in names:
            self.knowledge.addItem(name)
        self.knowledge_name.clear()

    def _remove_knowledge(self) -> None:
        for item in self.knowledge.selectedItems():
            self.knowledge.takeItem(self.knowledge.row(item))
