"""The status bar's permanent part: which model is loaded (or loading), the memory its weights
and the layer caches hold, the room saved caches take on disk, a progress bar for loading and
for reading a long prompt, and the local server's URL while it serves (click to copy)."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QToolButton, QWidget

from app.generation.model_session import ModelState, ModelStatus
from app.generation.worker_events import MemoryUse
from app.server.host import ServerState
from app.sizes import format_bytes
from ui.text.plain_text import literal, plain_label
from ui.widgets.theme import em


class StatusPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("StatusPanel")
        self.progress = QProgressBar()
        self.progress.setObjectName("LoadProgress")
        self.progress.setAccessibleName("Progress")
        self.progress.setMaximumWidth(em(self, 9))
        self.progress.setMaximumHeight(em(self, 0.9))
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.model_label = plain_label("No model")
        self.model_label.setObjectName("ModelLabel")
        self.model_label.setAccessibleName("Model")
        self.memory_label = QLabel()
        self.memory_label.setObjectName("MemoryLabel")
        self.memory_label.setAccessibleName("Memory in use")
        self.memory_label.setToolTip(
            "Memory held by the model's weights and by the layer caches that make branching "
            "and follow-ups instant, and the disk space of caches saved for after a restart "
            "(both budgets are in Preferences)"
        )
        self.memory_label.hide()
        self.server_button = QToolButton()
        self.server_button.setObjectName("ServerIndicator")
        self.server_button.setAccessibleName("Local server")
        self.server_button.setAutoRaise(True)
        self.server_button.clicked.connect(self._copy_server_url)
        self.server_button.hide()
        self._server_url: str | None = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, em(self, 0.5), 0)
        layout.setSpacing(em(self, 1))
        layout.addWidget(self.progress)
        layout.addWidget(self.model_label)
        layout.addWidget(self.memory_label)
        layout.addWidget(self.server_button)
        self._loading = False
        self.last_memory = MemoryUse(0, 0, 0, 0)  # the worker's last memory report
        self._weights_form = ""  # how the loaded model's weights run, e.g. "float32 (from 4-bit)"

    def set_model_status(self, status: ModelStatus) -> None:
        state, message = status.state, status.message
        self._loading = state == ModelState.LOADING
        if state == ModelState.READY:
            context = status.context_length
            self.model_label.setText(status.model_id or "Model ready")
            self._weights_form = status.weights_form
            facts = (
                ("Weights", status.weights_form),
                ("BLAS", status.blas),
                ("Matrices", status.matrix_layout),
            )
            runs = [f"{name}: {value}" for name, value in facts if value]
            self.model_label.setToolTip(
                "\n".join(
                    [
                        f"Loaded model; context window {context:,} tokens"
                        if context
                        else "Loaded model",
                        *runs,
                    ]
                )
            )
            self.progress.hide()
        elif state == ModelState.LOADING:
            self.model_label.setText(message or "Loading the model…")
            self.model_label.setToolTip("The model is loading; you can read and search meanwhile")
            self._show_progress(status.done, status.total)
            self.progress.setToolTip(literal(message or "Loading the model…"))
        else:
            self.model_label.setText("No model loaded")
            self.model_label.setToolTip(
                literal(message or "Choose a model in File › Model Library")
            )
            self.progress.hide()

    def set_memory(self, memory: MemoryUse) -> None:
        self.last_memory = memory
        weights, caches, disk = memory.weights_bytes, memory.cache_bytes, memory.disk_bytes
        form = f" ({self._weights_form})" if self._weights_form else ""
        self.memory_label.setText(
            f"Weights {format_bytes(weights)}{form} · Caches {format_bytes(caches)} in memory, "
            f"{format_bytes(disk)} on disk"
        )
        self.memory_label.setVisible(bool(weights or caches or disk))

    def set_server(self, state: ServerState) -> None:
        self._server_url = state.url
        message = state.message
        if self._server_url:
            self.server_button.setText(f"Serving at {self._server_url}")
            self.server_button.setToolTip(
                "Other apps can use this model through this OpenAI-compatible URL. Click to copy."
            )
        elif message:
            self.server_button.setText("Server stopped")
            self.server_button.setToolTip(message)
        self.server_button.setVisible(bool(self._server_url or message))

    def _copy_server_url(self) -> None:
        if self._server_url:
            QGuiApplication.clipboard().setText(self._server_url)
            self.server_button.setToolTip(f"Copied {self._server_url}")

    def set_prefill(self, done: int, total: int) -> None:
        """Reading a long prompt: a bar until the first token (hidden again when done)."""
        if self._loading:
            return
        if total < 0:  # a remote server's prompt: its size is unknown until the reply ends
            self._show_progress(0, 0)
            self.progress.setToolTip("Waiting for the server's first token")
        elif total > 0 and done < total:
            self._show_progress(done, total)
            self.progress.setToolTip(f"Reading the prompt: {done:,} of {total:,} tokens")
        else:
            self.progress.hide()

    def _show_progress(self, done: int, total: int) -> None:
        if total > 0:
            # Per mille: totals in bytes overflow the bar's int range.
            self.progress.setRange(0, 1000)
            self.progress.setValue(min(1000, done * 1000 // total))
        else:
            self.progress.setRange(0, 0)  # busy indicator: no known total
        self.progress.show()
