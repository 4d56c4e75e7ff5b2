"""The Connections page, remote models in a conversation's model choice and a remote chat in the
window, against a real mlx_lm.server on loopback; network calls run on a qasync loop, as in the
app."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path

from PySide6.QtGui import QAction
from pytestqt.qtbot import QtBot

from app.generation.model_session import ModelStatus
from app.remote.backend import WAITING
from app.remote.connections import Connection, Connections, FileKeys, RemoteModel
from app.store.conversations import Store
from tests.remote_servers import Served, free_port, play, until
from tests.ui.window_harness import SHORT, running_app, set_params
from ui.dialogs.connections_dialog import ConnectionsDialog
from ui.dialogs.conversation_settings import ConversationSettingsDialog
from ui.window.status_panel import StatusPanel


def _test_connection(loop: asyncio.AbstractEventLoop, dialog: ConnectionsDialog) -> None:
    """Click Test Connection with the loop running, as in the app, and wait for the answer."""

    async def click() -> None:
        dialog.test_connection()
        while not dialog.test_button.isEnabled():
            await asyncio.sleep(0.01)

    loop.run_until_complete(asyncio.wait_for(click(), 30))


def test_a_connection_is_saved_tested_and_its_key_kept_private(
    qtbot: QtBot, tmp_path: Path, qt_asyncio_loop, mlx_lm_server: Served
) -> None:
    connections = Connections(tmp_path, keys=FileKeys(tmp_path / "keys.json"))
    dialog = ConnectionsDialog(connections)
    qtbot.addWidget(dialog)
    dialog.name.setText("Studio")
    dialog.base_url.setText(mlx_lm_server.base_url + "/")
    dialog.api_key.setText("s3cret")
    assert dialog.save_connection()

    assert connections.all() == [Connection("Studio", mlx_lm_server.base_url)]
    assert "s3cret" not in (tmp_path / "connections.json").read_text()
    assert json.loads((tmp_path / "keys.json").read_text()) == {"Studio": "s3cret"}
    assert stat.S_IMODE((tmp_path / "keys.json").stat().st_mode) == 0o600
    assert dialog.api_key.placeholderText() == "stored (type to replace)"

    _test_connection(qt_asyncio_loop, dialog)
    assert [dialog.models.item(i).text() for i in range(dialog.models.count())] == [
        mlx_lm_server.model
    ]
    assert dialog.status.text() == "Connected: 1 model."

    dialog.base_url.setText(f"http://127.0.0.1:{free_port()}/v1")
    _test_connection(qt_asyncio_loop, dialog)
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
    assert dialog.speculation.isEnabled()  # no model chosen: drafting is this app's to do
    dialog.add_remote_models([remote])
    assert dialog.model_box.itemText(0) == "/models/Qwen3-8B · on Studio"
    dialog.model_box.setCurrentIndex(0)
    assert dialog.settings().model_folder_name == remote
    # The remote server decodes as it does: no drafting or draft model to choose here.
    assert not dialog.speculation.isEnabled() and not dialog.draft_model.isEnabled()
    assert dialog.draft_model.toolTip().startswith("A model on a remote server decodes")

    reopened = ConversationSettingsDialog(conversation, [], remote)  # chosen before
    qtbot.addWidget(reopened)
    assert reopened.model_box.currentText() == "/models/Qwen3-8B · on Studio"
    assert not reopened.speculation.isEnabled()
    store.close()


def test_waiting_for_a_remote_first_token_shows_a_busy_bar(qtbot: QtBot) -> None:
    panel = StatusPanel()
    qtbot.addWidget(panel)
    panel.set_model_status(ModelStatus("ready", model_id="tiny"))
    panel.set_prefill(0, WAITING)
    assert not panel.progress.isHidden()
    assert panel.progress.maximum() == 0  # no share done to show: a busy indicator
    assert panel.progress.toolTip() == "Waiting for the server's first token"
    panel.set_prefill(1, 1)
    assert panel.progress.isHidden()


def test_a_chat_on_a_remote_model_from_the_window(
    qtbot: QtBot, tmp_path: Path, llama_path: Path, qt_asyncio_loop, mlx_lm_server: Served
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        window = app.window
        assert window.findChild(QAction, "ConnectionsAction").text() == "&Connections…"
        connections = app.controller.connections
        assert connections is not None
        connections.save(Connection("lab", mlx_lm_server.base_url), None)
        cid = set_params(app, SHORT)
        remote = RemoteModel("lab", mlx_lm_server.model).model_id

        async def scenario() -> None:
            dialog = window.open_settings()
            await until(lambda: dialog.model_box.findData(remote) >= 0, timeout_s=30)
            dialog.model_box.setCurrentIndex(dialog.model_box.findData(remote))
            dialog.accept()
            assert app.store.get_conversation(cid).model_id == remote
            assert getattr(app.controller.model_info, "model_id", None) == "llama"  # still loaded

            for text in ("Hello", "Tell me more"):
                window.composer.edit.setFocus()
                qtbot.keyClicks(window.composer.edit, text)
                qtbot.keyClick(window.composer.edit, "\r")
                await until(lambda: not app.controller.is_busy())
            reply = app.store.active_path(cid)[-1]
            assert (reply.status, reply.model_id) == ("complete", remote)
            widget = window.chat_view.message_widget(str(reply.id))
            assert widget is not None and widget.stats_label is not None
            assert "reused from cache" in widget.stats_label.text()

        play(qt_asyncio_loop, scenario())
