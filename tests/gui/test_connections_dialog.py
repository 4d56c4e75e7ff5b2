"""The Connections page and remote models in a conversation's model choice, against a real
mlx_lm.server on loopback; the dialog's network calls run on a qasync loop, as in the app."""

from __future__ import annotations

import asyncio
import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from pytestqt.qtbot import QtBot

from app.connections import Connection, Connections, FileKeys, RemoteModel
from app.remote_backend import WAITING
from app.store import Store
from tests.remote_servers import Served, free_port, served_by_mlx_lm
from ui.connections_dialog import ConnectionsDialog
from ui.conversation_settings import ConversationSettingsDialog
from ui.status_panel import StatusPanel


@pytest.fixture(scope="module")
def mlx_server(llama_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with served_by_mlx_lm(llama_path, tmp_path_factory.mktemp("mlx-lm-server")) as served:
        yield served


@pytest.fixture
def loop(qapp) -> Iterator[asyncio.AbstractEventLoop]:
    event_loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(event_loop)
    yield event_loop
    event_loop.close()
    asyncio.set_event_loop(None)


def _test_connection(loop: asyncio.AbstractEventLoop, dialog: ConnectionsDialog) -> None:
    """Click Test Connection with the loop running, as in the app, and wait for the answer."""

    async def click() -> None:
        dialog.test_connection()
        while not dialog.test_button.isEnabled():
            await asyncio.sleep(0.01)

    loop.run_until_complete(asyncio.wait_for(click(), 30))


def test_a_connection_is_saved_tested_and_its_key_kept_private(
    qtbot: QtBot, tmp_path: Path, loop, mlx_server: Served
) -> None:
    connections = Connections(tmp_path, keys=FileKeys(tmp_path / "keys.json"))
    dialog = ConnectionsDialog(connections)
    qtbot.addWidget(dialog)
    dialog.name.setText("Studio")
    dialog.base_url.setText(mlx_server.base_url + "/")
    dialog.api_key.setText("s3cret")
    assert dialog.save_connection()

    assert connections.all() == [Connection("Studio", mlx_server.base_url)]
    assert "s3cret" not in (tmp_path / "connections.json").read_text()
    assert json.loads((tmp_path / "keys.json").read_text()) == {"Studio": "s3cret"}
    assert stat.S_IMODE((tmp_path / "keys.json").stat().st_mode) == 0o600
    assert dialog.api_key.placeholderText() == "stored (type to replace)"

    _test_connection(loop, dialog)
    assert [dialog.models.item(i).text() for i in range(dialog.models.count())] == [
        mlx_server.model
    ]
    assert dialog.status.text() == "Connected: 1 model."

    dialog.base_url.setText(f"http://127.0.0.1:{free_port()}/v1")
    _test_connection(loop, dialog)
    assert dialog.models.count() == 0
    assert "could not reach" in dialog.status.text()

    dialog.base_url.setText("localhost:8000")
    assert not dialog.save_connection()
    assert "is not a server address" in dialog.status.text()

    dialog.remove_connection()
    assert connections.all() == [] and connections.api_key("Studio") is None


def test_remote_models_are_offered_beside_local_ones(qtbot: QtBot, tmp_path: Path) -> None:
    store = Store.open(tmp_path / "chat.sqlite3")
    conversation = store.create_conversation(model_id=None, params={})
    remote = RemoteModel("Studio", "/models/Qwen3-8B").model_id
    dialog = ConversationSettingsDialog(conversation, [], None)
    qtbot.addWidget(dialog)
    dialog.add_remote_models([remote])
    assert dialog.model_box.itemText(0) == "/models/Qwen3-8B · on Studio"
    dialog.model_box.setCurrentIndex(0)
    assert dialog.settings().model_folder_name == remote

    reopened = ConversationSettingsDialog(conversation, [], remote)  # chosen before
    qtbot.addWidget(reopened)
    assert reopened.model_box.currentText() == "/models/Qwen3-8B · on Studio"
    store.close()


def test_waiting_for_a_remote_first_token_shows_a_busy_bar(qtbot: QtBot) -> None:
    panel = StatusPanel()
    qtbot.addWidget(panel)
    panel.set_model_status({"state": "ready", "model_id": "tiny"})
    panel.set_prefill(0, WAITING)
    assert not panel.progress.isHidden()
    assert panel.progress.maximum() == 0  # no share done to show: a busy indicator
    assert panel.progress.toolTip() == "Waiting for the server's first token"
    panel.set_prefill(1, 1)
    assert panel.progress.isHidden()
