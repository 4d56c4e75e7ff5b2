"""How the model's state shows in the window: whether the composer takes a message (and if not,
why and what to do), and the status bar's model name and memory use."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QApplication, QLineEdit, QPlainTextEdit, QTextEdit

from app.generation.model_session import ModelState, ModelStatus
from app.generation.worker_events import MemoryUse
from ui.window.window_host import WindowWidget

if TYPE_CHECKING:
    from ui.chat.composer import Composer
    from ui.window.models import WindowModels
    from ui.window.status_panel import StatusPanel


class StatusHost(WindowWidget, Protocol):
    """The window's parts that show the model's state."""

    status_panel: StatusPanel
    models: WindowModels
    composer: Composer


class ModelStatusPresenter(QObject):
    ready = Signal()  # a model is loaded: token counts can be asked for

    def __init__(self, window: StatusHost) -> None:
        super().__init__(window.window())
        self._composer = window.composer
        self._status_panel = window.status_panel
        self._models = window.models

    @Slot(object)
    def show_status(self, status: ModelStatus) -> None:
        state = status.state
        if state == ModelState.READY:
            self._composer.set_enabled_reason(None)
            self.ready.emit()
            focused = QApplication.focusWidget()
            if not isinstance(focused, QLineEdit | QPlainTextEdit | QTextEdit):
                self._composer.edit.setFocus()  # typing goes where it is expected
            status = replace(status, model_id=self._models.display_name(status.model_id))
        elif state == ModelState.LOADING:
            stage = (status.message or "Loading the model").rstrip(".…")
            self._composer.set_enabled_reason(f"{stage}… You can send once the model is ready.")
        else:
            reason = status.message or "No model is loaded."
            self._composer.set_enabled_reason(
                f"{reason.rstrip('.')}. Choose a model in File › Model Library."
            )
        self._status_panel.set_model_status(status)

    @Slot(object)
    def show_memory(self, memory: MemoryUse) -> None:
        self._status_panel.set_memory(memory)
