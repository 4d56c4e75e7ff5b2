"""App preferences: the memory and disk budgets for layer caches, "Clear saved caches", what a
chat does by default once it outgrows the model's context, the theme, each model's default draft
model and image detail (`ui.forms.model_defaults`), the local server (tab "General"), what new
chats start with (tab "New chats", `ui.dialogs.new_chat_defaults`), how long chats are
summarised (tab "Summaries", `ui.dialogs.summaries_page`), tool use (tab "Tools",
`ui.dialogs.tools_page`) and voice (tab "Voice", `ui.voice.voice_page`, given by the window)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import psutil
from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.library.cpu_weights import cpu_backend
from app.server.config import ServerConfig, ServerConfigError
from app.settings import SummarySettings
from app.sizes import format_bytes
from ui.dialogs.new_chat_defaults import ChatDefaults, NewChatDefaultsPage
from ui.dialogs.summaries_page import SummariesPage
from ui.forms.model_defaults import ModelDefaults
from ui.forms.overflow_choice import overflow_box
from ui.widgets.scrolling_form import open_at_full_height
from ui.widgets.theme import THEME_MODES, ThemeMode, em

if TYPE_CHECKING:
    from app.generation.worker_events import MemoryUse
    from app.library.entries import ModelInfo
    from ui.dialogs.tools_page import ToolsPage

GB = 1_000_000_000
_THEME_LABELS = {"system": "Follow the system", "light": "Light", "dark": "Dark"}


class PreferencesDialog(QDialog):
    """`clearSavedRequested` asks the window to delete the saved caches (once the person has
    confirmed); it answers with `set_disk_bytes`."""

    clearSavedRequested = Signal()

    def __init__(
        self,
        cache_budget_bytes: int,
        theme: ThemeMode,
        parent: QWidget | None = None,
        *,
        disk_budget_bytes: int = 0,
        disk_bytes: int = 0,
        overflow: str = "truncate_middle",
        cpu_float32: str = "auto",
        server_enabled: bool = False,
        server: ServerConfig | None = None,
        new_chats: ChatDefaults | None = None,
        models: Sequence[ModelInfo] = (),
        current_model: str | None = None,
        draft_for: Callable[[str], str | None] = lambda _model: None,
        detail_for: Callable[[str], int | None] = lambda _model: None,
        tools_page: ToolsPage | None = None,
        presets: Sequence[tuple[int, str]] = (),
        summaries: SummarySettings | None = None,
        voice_page: QWidget | None = None,
        collections: Sequence[str] = (),
    ) -> None:
        """`new_chats` are the defaults new chats start with now; `presets` (id, name) those
        they may start from; `models` the library, to choose their model from; with
        `draft_for(model)` and `detail_for(model)` it also fills "Models" (each model's draft
        model and image detail), showing `current_model` first; `collections` are the knowledge
        new chats may read."""
        super().__init__(parent)
        self.setObjectName("PreferencesDialog")
        self.setWindowTitle("Preferences")
        self.setAccessibleName("Preferences")
        total_gb = psutil.virtual_memory().total / GB

        self.budget = QDoubleSpinBox()
        self.budget.setAccessibleName("Cache memory budget")
        self.budget.setRange(0.0, round(total_gb, 1))
        self.budget.setDecimals(1)
        self.budget.setSingleStep(0.5)
        self.budget.setSuffix(" GB")
        self.budget.setValue(cache_budget_bytes / GB)
        self.budget.setToolTip(
            "Memory the layer caches may keep so that follow-ups, regenerations and branch "
            "switches start at once; the least recently used go first. 0 keeps none."
        )
        hint = QLabel(f"This computer has {total_gb:.1f} GB of memory.")
        hint.setObjectName("PreferencesHint")

        self.disk_budget = QDoubleSpinBox()
        self.disk_budget.setAccessibleName("Saved caches disk budget")
        self.disk_budget.setRange(0.0, 100_000.0)
        self.disk_budget.setDecimals(1)
        self.disk_budget.setSingleStep(1.0)
        self.disk_budget.setSuffix(" GB")
        self.disk_budget.setValue(disk_budget_bytes / GB)
        self._initial_disk_budget = self.disk_budget.value()
        self.disk_budget.setToolTip(
            "Disk space for caches kept across restarts, so the first follow-up after a restart "
            "starts at once; the least recently used go first. 0 keeps none. By default the "
            "smaller of 30 GiB and a quarter of the free space."
        )
        self.disk_used = QLabel()
        self.disk_used.setObjectName("PreferencesHint")
        self.clear_saved = QPushButton("Clear Saved Caches…")
        self.clear_saved.setAccessibleName("Clear saved caches")
        self.clear_saved.setToolTip(
            "Delete the loaded model's caches, on disk and in memory; conversations stay, and "
            "the next reply of each reads its whole prompt again"
        )
        self.clear_saved.clicked.connect(self._confirm_clear)
        disk_row = QHBoxLayout()
        disk_row.addWidget(self.disk_used, 1)
        disk_row.addWidget(self.clear_saved)
        self.set_disk_bytes(disk_bytes)

        self.overflow = overflow_box(overflow)
        self.overflow.setAccessibleName("Default for chats that outgrow the context")

        self.theme = QComboBox()
        self.theme.setAccessibleName("Theme")
        self.theme.setToolTip("Light, dark, or whatever the system uses")
        for mode in THEME_MODES:
            self.theme.addItem(_THEME_LABELS[mode], mode)
        self.theme.setCurrentIndex(self.theme.findData(theme))

        form = QFormLayout()
        form.addRow("Cache memory budget", self.budget)
        form.addRow("", hint)
        form.addRow("Saved caches on disk", self.disk_budget)
        form.addRow("", disk_row)
        form.addRow("When a chat outgrows the context", self.overflow)
        form.addRow("Theme", self.theme)
        self.cpu_float32 = _cpu_float32_box(cpu_float32)
        if cpu_backend():  # MLX computes on the CPU here: no GPU to run the weights on
            form.addRow("On the CPU, trade memory for speed", self.cpu_float32)
        self.model_defaults = ModelDefaults(models, current_model, draft_for, detail_for)
        self.server_group = self._server_group(server_enabled, server or ServerConfig())
        self.server_error = QLabel()
        self.server_error.setObjectName("PreferencesError")
        self.server_error.setWordWrap(True)
        self.server_error.hide()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        for button in buttons.buttons():
            button.setAccessibleName(button.text().replace("&", ""))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.general = QWidget()
        general = QVBoxLayout(self.general)
        general.addLayout(form)
        general.addWidget(self.model_defaults)
        general.addWidget(self.server_group)
        general.addStretch(1)
        self.new_chats_page = NewChatDefaultsPage(
            new_chats or ChatDefaults(None, "", {}), models, presets, collections
        )
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Preferences pages")
        self.tabs.addTab(self.general, "General")
        self.tabs.addTab(self.new_chats_page, "New chats")
        self.tabs.setTabToolTip(1, "The model, system prompt, sampling and knowledge of new chats")
        self.summaries_page = SummariesPage(summaries or SummarySettings(), models)
        self.tabs.addTab(self.summaries_page, "Summaries")
        self.tabs.setTabToolTip(2, "How a long chat is summarised into a new branch")
        self.tools_page = tools_page  # ui.dialogs.tools_page, filled and followed by the window
        if tools_page is not None:
            self.tabs.addTab(tools_page, "Tools")
            self.tabs.setTabToolTip(3, "MCP servers, remembered approvals, the call limit")
        self.voice_page = voice_page  # ui.voice.voice_page, filled and applied by the window
        if voice_page is not None:
            index = self.tabs.addTab(voice_page, "Voice")
            self.tabs.setTabToolTip(index, "Dictation, reading replies aloud, voice conversations")
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(self.server_error)
        layout.addWidget(buttons)
        self.setMinimumWidth(em(self, 22))
        open_at_full_height(self, self.new_chats_page.fields)  # the longest page

    def _server_group(self, enabled: bool, config: ServerConfig) -> QGroupBox:
        group = QGroupBox("Serve this model to other apps (OpenAI-compatible API)")
        group.setAccessibleName("Server")
        group.setCheckable(True)
        group.setChecked(enabled)
        self.server_host = QLineEdit(config.host)
        self.server_host.setAccessibleName("Server address")
        self.server_host.setToolTip(
            "127.0.0.1 keeps the server to this computer; any other address needs an API key"
        )
        self.server_port = QSpinBox()
        self.server_port.setAccessibleName("Server port")
        self.server_port.setRange(1, 65535)
        self.server_port.setValue(config.port or 1234)
        self.server_key = QLineEdit(config.api_key)
        self.server_key.setAccessibleName("Server API key")
        self.server_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.server_key.setPlaceholderText("none (loopback only)")
        self.server_origins = QLineEdit(" ".join(config.cors_origins))
        self.server_origins.setAccessibleName("Allowed web origins")
        self.server_origins.setPlaceholderText("e.g. http://localhost:3000")
        self.server_origins.setToolTip(
            "Web pages from these origins (separated by spaces) may call the server"
        )
        form = QFormLayout(group)
        form.addRow("Address", self.server_host)
        form.addRow("Port", self.server_port)
        form.addRow("API key", self.server_key)
        form.addRow("Web origins", self.server_origins)
        return group

    def accept(self) -> None:
        """Refuse settings the server must not run with, saying why, instead of closing."""
        if self.server_enabled():
            try:
                self.server_config().check()
            except ServerConfigError as exc:
                self.server_error.setText(str(exc))
                self.server_error.show()
                self.tabs.setCurrentWidget(self.general)
                return
        super().accept()

    def server_enabled(self) -> bool:
        return self.server_group.isChecked()

    def server_config(self) -> ServerConfig:
        return ServerConfig(
            host=self.server_host.text().strip() or "127.0.0.1",
            port=self.server_port.value(),
            api_key=self.server_key.text().strip(),
            cors_origins=tuple(self.server_origins.text().split()),
        )

    def cache_budget_bytes(self) -> int:
        return round(self.budget.value() * GB)

    def theme_mode(self) -> ThemeMode:
        return self.theme.currentData()

    def disk_budget_bytes(self) -> int | None:
        """The disk budget the person set; None when left as shown (the default stays)."""
        value = self.disk_budget.value()
        return None if value == self._initial_disk_budget else round(value * GB)

    def overflow_policy(self) -> str:
        return self.overflow.currentData()

    def cpu_float32_policy(self) -> str:
        return self.cpu_float32.currentData()

    def new_chats(self) -> ChatDefaults:
        return self.new_chats_page.defaults()

    def summaries(self) -> SummarySettings:
        return self.summaries_page.settings()

    def draft_defaults(self) -> dict[str, str | None]:
        """The default draft models the person changed: {model: draft, None for none}."""
        return self.model_defaults.draft_changes()

    def image_details(self) -> dict[str, int | None]:
        """The image details the person changed: {model: pixels, None for the model's own}."""
        return self.model_defaults.detail_changes()

    def set_disk_bytes(self, disk_bytes: int) -> None:
        self.disk_used.setText(f"Saved caches now take {format_bytes(disk_bytes)}.")

    @Slot(object)
    def show_memory(self, memory: MemoryUse) -> None:
        """The worker's memory report (`memoryChanged`): keep the disk use current."""
        self.set_disk_bytes(memory.disk_bytes)

    def _confirm_clear(self) -> None:
        answer = QMessageBox.question(
            self,
            "Clear saved caches?",
            "Delete the loaded model's caches, on disk and in memory? Conversations are not "
            "touched; the next reply of each reads its whole prompt again.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.clearSavedRequested.emit()


_CPU_FLOAT32_LABELS = {"auto": "Auto", "always": "Always", "never": "Never"}


def _cpu_float32_box(policy: str) -> QComboBox:
    box = QComboBox()
    box.setAccessibleName("On the CPU, trade memory for speed")
    box.setToolTip(
        "Run models as float32 on this computer's CPU: prompts are read more than 10x faster "
        "and replies come up to 2x faster, for 2x the memory of a 16-bit model (about 5x a "
        "4-bit one). Auto does it when the model then fits a quarter of the memory. Takes "
        "effect when a model is next loaded."
    )
    for value, label in _CPU_FLOAT32_LABELS.items():
        box.addItem(label, value)
    box.setCurrentIndex(max(0, box.findData(policy)))
    return box
