"""File › Connections…: the OpenAI-compatible servers Branchwise can chat through (vLLM, SGLang,
llama.cpp, Ollama, LM Studio, mlx_lm.server, another Branchwise...).

Each connection is a name, a base URL and an optional API key. "Test Connection" lists the
models the server offers at /v1/models; those then appear in every conversation's model choice.
Network calls run as tasks on the asyncio loop (the qasync loop: the Qt loop itself), so the
dialog never blocks.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QMainWindow,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.async_tasks import NO_LOOP, spawn
from app.remote.connections import Connection, Connections, ConnectionSettingsError
from ui.widgets.theme import em


class ConnectionsDialog(QDialog):
    changed = Signal()  # a connection was saved or removed

    def __init__(self, connections: Connections, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ConnectionsDialog")
        self.setWindowTitle("Connections")
        self.setAccessibleName("Connections")
        self.connections = connections
        self._editing: str | None = None  # the saved name of the connection in the form
        self._test: asyncio.Task[None] | None = None

        self.list = QListWidget()
        self.list.setAccessibleName("Saved connections")
        self.list.currentTextChanged.connect(self._show)
        add = QPushButton("New")
        add.setAccessibleName("New connection")
        add.clicked.connect(self.new_connection)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setAccessibleName("Remove connection")
        self.remove_button.clicked.connect(self.remove_connection)
        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(self.remove_button)
        left.addLayout(row)

        self.name = QLineEdit()
        self.name.setPlaceholderText("e.g. Studio")
        self.base_url = QLineEdit()
        self.base_url.setPlaceholderText("http://127.0.0.1:8000/v1")
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setToolTip(f"Kept in {connections.keys.where}, never in the settings")
        form = QFormLayout()
        for label, field in (("Name", self.name), ("Base URL", self.base_url),
                             ("API key", self.api_key)):  # fmt: skip
            field.setAccessibleName(label)
            form.addRow(QLabel(label), field)
        self.save_button = QPushButton("Save")
        self.save_button.clicked.connect(self.save_connection)
        self.test_button = QPushButton("Test Connection")
        self.test_button.setToolTip("Ask the server which models it offers")
        self.test_button.clicked.connect(self.test_connection)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.test_button)
        buttons.addWidget(self.save_button)
        self.status = QLabel()
        self.status.setObjectName("ConnectionStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.models = QListWidget()
        self.models.setAccessibleName("Models on this server")
        right = QVBoxLayout()
        right.addLayout(form)
        right.addLayout(buttons)
        right.addWidget(self.status)
        right.addWidget(QLabel("Models"))
        right.addWidget(self.models, 1)

        body = QHBoxLayout()
        body.addLayout(left, 1)
        body.addLayout(right, 2)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(body)
        layout.addWidget(close)
        self.setMinimumWidth(em(self, 40))
        self.refresh()

    def refresh(self) -> None:
        try:
            names = [c.name for c in self.connections.all()]
        except ConnectionSettingsError as exc:
            names = []
            self.status.setText(str(exc))
        self.list.clear()
        self.list.addItems(names)
        if names:
            self.list.setCurrentRow(0)
        else:
            self.new_connection()

    @Slot()
    def new_connection(self) -> None:
        self.list.clearSelection()
        self._editing = None
        for field in (self.name, self.base_url, self.api_key):
            field.clear()
        self.api_key.setPlaceholderText("none")
        self.models.clear()
        self.remove_button.setEnabled(False)
        self.name.setFocus()

    @Slot(str)
    def _show(self, name: str) -> None:
        connection = self.connections.get(name) if name else None
        if connection is None:
            return
        self._editing = connection.name
        self.name.setText(connection.name)
        self.base_url.setText(connection.base_url)
        self.api_key.clear()
        stored = self.connections.api_key(connection.name)
        self.api_key.setPlaceholderText("stored (type to replace)" if stored else "none")
        self.models.clear()
        self.status.clear()
        self.remove_button.setEnabled(True)

    @Slot()
    def save_connection(self) -> bool:
        # An empty key field keeps the stored key; a key is removed by removing the connection.
        key = self.api_key.text().strip() or None
        try:
            saved = self.connections.save(
                Connection(self.name.text(), self.base_url.text()), key, replacing=self._editing
            )
        except ConnectionSettingsError as exc:
            self.status.setText(str(exc))
            return False
        self.status.setText(f"Saved “{saved.name}”.")
        self.refresh()
        self.list.setCurrentRow(next(
            i for i in range(self.list.count()) if self.list.item(i).text() == saved.name
        ))  # fmt: skip
        self.changed.emit()
        return True

    @Slot()
    def remove_connection(self) -> None:
        if self._editing is None:
            return
        self.connections.remove(self._editing)
        self.status.setText(f"Removed “{self._editing}”.")
        self.refresh()
        self.changed.emit()

    @Slot()
    def test_connection(self) -> None:
        """List the server's models from the URL and key in the form (saved or not)."""
        url = self.base_url.text().strip()
        key = self.api_key.text().strip() or (
            self.connections.api_key(self._editing) if self._editing else None
        )
        self.models.clear()
        if self._test is not None:
            self._test.cancel()
        self._test = spawn(self._list(url, key))
        if self._test is None:
            self.status.setText(NO_LOOP)
            return
        self.status.setText(f"Asking {url} for its models…")
        self.test_button.setEnabled(False)

    async def _list(self, url: str, key: str | None) -> None:
        from app.remote.client import RemoteError, list_models  # seconds to import: on use

        try:
            models = await list_models(url, key)
        except RemoteError as exc:
            self.status.setText(str(exc))
        else:
            self.models.addItems(models)
            self.status.setText(f"Connected: {len(models)} model{'s' if len(models) != 1 else ''}.")
        finally:
            self.test_button.setEnabled(True)


def add_connections_action(
    window: QMainWindow, library: QAction, connections: Connections
) -> QAction:
    """File › Connections…, after `library` (Model Library…); the dialog is made on first use."""
    dialogs: list[ConnectionsDialog] = []

    def show() -> None:
        if not dialogs:
            dialogs.append(ConnectionsDialog(connections, window))
        dialogs[0].refresh()
        dialogs[0].show()
        dialogs[0].raise_()

    action = QAction("&Connections…", window)
    action.setToolTip("Chat with models on other servers (vLLM, llama.cpp, Ollama, MLX…)")
    action.setObjectName("ConnectionsAction")
    action.triggered.connect(show)
    for menu in window.menuBar().findChildren(QMenu):
        actions = menu.actions()
        if library in actions:
            following = actions[actions.index(library) + 1 : actions.index(library) + 2]
            if following:
                menu.insertAction(following[0], action)
            else:
                menu.addAction(action)
    return action
