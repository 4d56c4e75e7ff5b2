"""The window's local server: turned on in Preferences › Server, shown in the status bar (click to
copy the URL), answering the `openai` client on the window's own loop (Qt's, through qasync)
from the window's model, started again at launch when left on, and a bad setting refused in the
dialog with the reason."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import openai
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from app.paths import AppPaths
from app.server.config import ServerConfig
from app.server.host import ServerState
from app.settings import Preferences
from tests.paths import ROOT
from tests.ui.window_harness import OFFSCREEN_NOISE, running_app
from ui.main import asyncio_loop, start_async_services

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)
SCENARIO_S = 60


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_preferences_turn_the_server_on_and_the_status_bar_shows_its_url(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path / "data", llama_path) as launched:
        window, host = launched.window, launched.controller.server
        assert not launched.controller.preferences.server_enabled  # off by default
        start_async_services(launched)  # what `run` does once the window is painted
        assert host.url is None
        port = _free_port()
        dialog = window.open_preferences()
        dialog.server_group.setChecked(True)
        dialog.server_port.setValue(port)
        dialog.accept()
        url = f"http://127.0.0.1:{port}/v1"

        async def scenario() -> tuple[str, str]:
            await host.settled()
            shown = button.text()
            client = openai.AsyncOpenAI(base_url=url, api_key="unused", max_retries=0)
            try:
                reply = await client.chat.completions.create(
                    model="llama",
                    messages=[{"role": "user", "content": "Hi"}],
                    max_tokens=3,
                    temperature=0,
                )
            finally:
                await client.close()
            await host.apply(None)
            return shown, reply.choices[0].finish_reason

        loop = asyncio_loop(launched.app)
        button = window.status_panel.server_button
        shown, finish = loop.run_until_complete(asyncio.wait_for(scenario(), SCENARIO_S))
        assert shown == f"Serving at {url}"
        assert finish in ("stop", "length")
        assert launched.controller.preferences.server_enabled
        assert launched.controller.preferences.server_config.port == port
        # Stopped at the end of the scenario: the indicator goes away.
        assert not button.isVisible()
        window.status_panel.set_server(ServerState(url))
        assert button.isVisible() and url in button.text()
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        assert QGuiApplication.clipboard().text() == url


def test_a_network_address_without_a_key_is_refused_in_the_dialog(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path / "data", llama_path) as launched:
        dialog = launched.window.open_preferences()
        dialog.server_group.setChecked(True)
        dialog.server_host.setText("0.0.0.0")
        dialog.accept()
        assert dialog.isVisible(), "the dialog stays open until the setting is fixed"
        assert "API key" in dialog.server_error.text()
        assert not launched.controller.preferences.server_enabled
        dialog.reject()


def test_a_server_left_on_starts_with_the_window(qtbot, tmp_path: Path, llama_path: Path) -> None:
    data = tmp_path / "data"
    port = _free_port()
    preferences = Preferences(AppPaths.resolve(data).settings_file)
    preferences.server_enabled = True
    preferences.server_config = ServerConfig(port=port)
    preferences.sync()
    with running_app(qtbot, data, llama_path) as launched:
        host = launched.controller.server
        start_async_services(launched)  # what `run` does once the window is painted
        loop = asyncio_loop(launched.app)
        loop.run_until_complete(asyncio.wait_for(host.settled(), SCENARIO_S))
        assert host.url == f"http://127.0.0.1:{port}/v1"
        assert launched.window.status_panel.server_button.text() == f"Serving at {host.url}"
        loop.run_until_complete(asyncio.wait_for(host.apply(None), SCENARIO_S))
        assert host.url is None


_SERVING_APP = textwrap.dedent(
    """
    import json, sys, threading, time, urllib.request
    from ui.main import launch, parse_args, run

    launched = launch(parse_args(sys.argv[2:]))
    url = sys.argv[1]

    def ask() -> None:
        # Until the server answers and lists the model (it loads behind the window).
        deadline, answer = time.monotonic() + 60, None
        while not (answer and answer["data"]) and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url + "/models", timeout=5) as response:
                    answer = json.load(response)
            except OSError:
                pass
            time.sleep(0.2)
        print("MODELS", json.dumps(answer), flush=True)
        launched.controller.worker.relay.post(lambda _: launched.window.close(), None)

    threading.Thread(target=ask, daemon=True).start()
    sys.exit(run(launched))
    """
)


def test_the_app_serves_from_its_own_event_loop(tmp_path: Path, llama_path: Path) -> None:
    """The real start-up (`ui.main.run`): Qt's loop runs asyncio after the first paint, the
    server left on answers from it, and closing the window ends the process."""
    data, port = tmp_path / "data", _free_port()
    preferences = Preferences(AppPaths.resolve(data).settings_file)
    preferences.server_enabled = True
    preferences.server_config = ServerConfig(port=port)
    preferences.sync()
    url = f"http://127.0.0.1:{port}/v1"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _SERVING_APP,
            url,
            "--data-dir",
            str(data),
            "--model",
            str(llama_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("MODELS"))
    assert json.loads(line.removeprefix("MODELS "))["data"][0]["id"] == "llama"
