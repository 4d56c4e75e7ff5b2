"""Tool use in the window, as a person meets it: the real app with a scripted model whose template
takes tools and the fixture MCP server. The reply's call shows "Calling…", then the card below
it asks; Run runs it and the model goes on; the result shows folded and unfolds; Deny, editing
the arguments (a sibling reply) and the tools button; a chat on a remote model (the fake server
of `tests.fake_openai`) asks and names its tools the same way. Screenshots of each, light and
dark, go to tests/screenshots/."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QLabel, QPushButton, QWidget

from app.generation.reply_events import StreamUpdate
from app.paths import AppPaths
from app.remote.connections import Connection, RemoteModel
from app.settings import Preferences
from tests.app.mcp.fixture_launch import FIXTURE, LIFETIME_S
from tests.fake_openai import Call, FakeServer, Reply
from tests.remote_servers import until
from tests.tool_engine import ToolScriptedEngine, call_markup, tool_worker
from tests.ui.screenshots.test_screenshots import _save
from tests.ui.window_harness import OFFSCREEN_NOISE, scripted_worker, start_app
from ui.chat.tool_result import ToolResultView
from ui.main import Launched

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

# A deadline for a hang, not a speed: the fixture server's start took 31 s once on the 2-core VM
# while the bundle was being built beside it, so 30 s failed a working start.
LIMIT_S = 120
SECRET = "sk-do-not-show"
WEATHER = "Let me look that up.\n" + call_markup("fx__add", a=19, b=23)


class App:
    def __init__(self, launched: Launched, loop: asyncio.AbstractEventLoop) -> None:
        self.launched = launched
        self.loop = loop
        self.window = launched.window
        self.controller = launched.controller

    def wait(
        self,
        signal: SignalInstance,
        action: Callable[[], Any] = lambda: None,
        check: Callable[..., bool] = lambda *a: True,
    ) -> Any:
        """Do `action` and run the app until `signal` carries what `check` accepts."""
        found = self.expect(signal, check)  # before the loop runs: it may deliver at once
        action()
        return self.loop.run_until_complete(asyncio.wait_for(found, LIMIT_S))

    async def signal(
        self,
        signal: SignalInstance,
        action: Callable[[], Any],
        check: Callable[..., bool] = lambda *a: True,
    ) -> Any:
        found = self.expect(signal, check)
        action()
        return await asyncio.wait_for(found, LIMIT_S)

    def expect(self, signal: SignalInstance, check: Callable[..., bool]) -> asyncio.Future[Any]:
        """A future for `signal`'s next emission that `check` accepts."""
        found: asyncio.Future[Any] = self.loop.create_future()

        def hit(*args: Any) -> None:
            if not found.done() and check(*args):
                found.set_result(args)

        signal.connect(hit)
        found.add_done_callback(lambda _f: signal.disconnect(hit))
        return found

    def idle(self, action: Callable[[], Any]) -> None:
        self.wait(self.controller.busyChanged, action, lambda busy: not busy)

    def send(self, text: str) -> None:
        composer = self.window.composer
        composer.edit.setPlainText(text)
        self.wait(self.controller.tool_flow.approvalNeeded, composer.send)

    def results(self) -> list[ToolResultView]:
        return [w for w in self.window.chat_view.findChildren(ToolResultView) if w.isVisible()]

    def shots(self, name: str, widget: QWidget | None = None) -> None:
        """Screenshots light and dark, taken with the loop running (a tool call in flight goes
        on only there, as in the app)."""

        async def take() -> None:
            for theme in ("light", "dark"):
                self.window.set_theme(theme)
                await asyncio.sleep(0)  # let the restyle paint
                _save(widget or self.window, f"{name}-{theme}")
            self.window.set_theme("light")

        self.loop.run_until_complete(take())


def _ready(session: Any) -> bool:
    return [i.status for i in session.server_infos()] == ["ready"]


@pytest.fixture
def app(qtbot, tmp_path: Path, qt_asyncio_loop) -> Iterator[Callable[..., App]]:
    made: list[App] = []

    def start(replies: list[str], tools: bool = True) -> App:
        entry = {
            "command": sys.executable,
            "args": [str(FIXTURE), "--lifetime", str(LIFETIME_S)],
            "env": {"FIXTURE_KEY": SECRET},
        }
        (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"fx": entry}}))
        Preferences(AppPaths.resolve(tmp_path).settings_file).mark_tool_server_started("fx")
        engine = ToolScriptedEngine(replies)
        worker = tool_worker(engine) if tools else scripted_worker(engine)
        launched = start_app(qtbot, tmp_path, tmp_path / "demo-model", worker, wait_ready=False)
        shown = App(launched, qt_asyncio_loop)
        made.append(shown)
        shown.window.resize(1000, 720)
        if launched.controller.model_state != "ready":
            shown.wait(launched.controller.modelStatus, check=lambda s: s.state == "ready")
        session = launched.controller.tool_session
        if not _ready(session):
            shown.wait(session.serversChanged, check=lambda: _ready(session))
        return shown

    yield start
    for shown in made:
        shown.loop.run_until_complete(shown.controller.tool_session.servers.close())


def test_approve_run_and_the_result_folded(app) -> None:
    shown = app([WEATHER, "19 and 23 make 42."])
    window, card = shown.window, shown.window.tools.card
    seen: list[StreamUpdate] = []
    shown.controller.streamUpdated.connect(seen.append)
    shown.send("What is 19 + 23?")
    assert any(p.calling == "fx__add" for p in seen)
    assert card.isVisible() and card.state == "approval"
    assert card.title.text() == "Run add from fx?"
    assert json.loads(card.arguments.toPlainText()) == {"a": 19, "b": 23}
    (server,) = shown.controller.tool_session.server_infos()
    assert window.composer.tools.text() == f"Tools · {len(server.tools) + 1}"  # and the built-in
    shown.shots("tools-approval")

    shown.idle(card.run_button.click)
    assert card.isHidden()
    (result,) = shown.results()
    assert result.summary.startswith("add on fx · ") and result.summary.endswith("2 characters")
    assert not result.expanded
    roles = [m.role for m in shown.controller.store.active_path(window.current_conversation_id)]
    assert roles == ["user", "assistant", "tool", "assistant"]
    shown.shots("tools-result-folded")
    result.toggle.click()
    assert result.text.toPlainText() == "42"
    shown.shots("tools-result-open")


def test_a_repeated_call_asks_again_under_always_with_a_note(app) -> None:
    again = "Let me check once more.\n" + call_markup("fx__add", a=19, b=23)
    shown = app([WEATHER, again, "Still 42."])
    card = shown.window.tools.card
    shown.send("What is 19 + 23?")
    assert card.changed.isHidden()
    shown.wait(shown.controller.tool_flow.approvalNeeded, card.always_tool.click)
    assert card.state == "approval" and card.changed.isVisible()
    assert card.changed.text().startswith("The model already made this same call")
    shown.shots("tools-repeated")
    shown.idle(card.deny_button.click)
    roles = [
        m.role for m in shown.controller.store.active_path(shown.window.current_conversation_id)
    ]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]


def test_deny_and_edited_arguments(app) -> None:
    shown = app([WEATHER, "You said no.", WEATHER, "Now 40."])
    card, store = shown.window.tools.card, shown.controller.store
    shown.send("What is 19 + 23?")
    shown.idle(card.deny_button.click)
    cid = shown.window.current_conversation_id
    *_, denied, _answer = store.active_path(cid)
    assert denied.status == "error" and denied.stats["failure"] == "denied"
    assert shown.results()[0].summary == "add on fx · denied"

    shown.send("Then 20 + 20?")
    card.arguments.setPlainText('{"a": 20, "b": 20}')
    shown.idle(card.run_button.click)
    *_, call, result, _answer = store.active_path(cid)
    assert call.tool_calls[0]["arguments"] == {"a": 20, "b": 20}
    assert result.content == "40"
    widget = shown.window.chat_view.message_widget(str(call.id))
    assert widget is not None and widget.nav is not None
    assert (widget.view.sibling_index, widget.view.sibling_count) == (2, 2)


def test_the_tools_button_follows_the_model_and_the_chat(app) -> None:
    shown = app(["Plain answer."], tools=False)
    button = shown.window.composer.tools
    assert not button.isEnabled() and "takes no tools" in button.toolTip()
    assert button.text() == "Tools"  # no count of tools the model will not be offered
    shown.shots("tools-off")


def test_a_chat_with_a_remote_model_is_offered_tools_whatever_the_local_model(app) -> None:
    shown = app(["Plain answer."], tools=False)
    window, button = shown.window, shown.window.composer.tools
    window.composer.edit.setPlainText("Hello")
    shown.idle(window.composer.send)  # a plain answer: the chat exists now
    assert not button.isEnabled()  # the local model takes no tools
    cid = window.current_conversation_id
    shown.controller.update_settings(cid, model_id="remote:Work server/gpt-oss")
    window.tools.conversation_shown()
    assert button.isEnabled()  # the server reads the calls; they run here
    shown.controller.update_settings(cid, model_id="demo-model")  # back to the local model
    window.tools.conversation_shown()
    assert not button.isEnabled() and "takes no tools" in button.toolTip()


def test_preferences_list_servers_and_revocable_approvals(app) -> None:
    shown = app([WEATHER, "42."])
    card = shown.window.tools.card
    shown.send("What is 19 + 23?")
    shown.idle(card.always_tool.click)
    dialog = shown.window.settings_commands.open_preferences()
    page = dialog.tools_page
    dialog.tabs.setCurrentWidget(page)
    dialog.resize(760, 620)
    row = page.server_rows["fx"]
    assert row.status.text().startswith("Ready · ")
    assert "fixture_server.py" in row.command.text() and "FIXTURE_KEY=•••" in row.command.text()
    assert SECRET not in row.command.text()
    labels = [w.text() for w in page.approvals_box.findChildren(QLabel)]
    assert "add on fx, in every chat" in labels
    shown.shots("preferences-tools", dialog)
    revoke = next(b for b in page.approvals_box.findChildren(QPushButton) if b.text() == "Revoke")
    revoke.click()
    assert shown.controller.tool_session.approval_list() == []
    assert page.server_rows["branchwise"].default_box.isChecked()
    page.server_rows["fx"].default_box.setChecked(False)  # new chats: the built-in tools only
    dialog.accept()
    assert shown.controller.preferences.default_tool_servers == ["branchwise"]
    assert shown.window.composer.tools.text() == "Tools · 1"


def test_cancel_a_running_call_and_choose_the_chats_tools(app) -> None:
    shown = app([call_markup("fx__sleep", seconds=60), "It was cancelled."])
    card, flow, store = shown.window.tools.card, shown.controller.tool_flow, shown.controller.store
    shown.send("Wait a minute, please.")

    async def run_then_cancel() -> None:
        # In one run of the loop: the call goes on only while it runs, as in the app.
        await shown.signal(flow.callRunning, card.run_button.click)
        assert card.state == "running" and card.cancel_button.isVisible()
        assert card.title.text().startswith("Running sleep on fx…")
        for theme in ("light", "dark"):
            shown.window.set_theme(theme)
            _save(shown.window, f"tools-running-{theme}")
        shown.window.set_theme("light")
        await shown.signal(
            shown.controller.busyChanged, card.cancel_button.click, lambda busy: not busy
        )

    shown.loop.run_until_complete(run_then_cancel())
    cid = shown.window.current_conversation_id
    *_, result, answer = store.active_path(cid)
    assert result.status == "error" and result.stats["failure"] == "cancelled"
    assert answer.content == "It was cancelled."
    assert shown.results()[0].summary.startswith("sleep on fx · cancelled")

    button = shown.window.composer.tools
    fx = next(a for a in button.menu().actions() if a.data() == "fx")
    fx.setChecked(False)
    assert store.get_conversation(cid).params["tool_servers"] == ["branchwise"]
    assert button.text() == "Tools · 1"


def test_quitting_stops_the_tool_servers(app) -> None:
    shown = app(["Plain answer."])
    session = shown.controller.tool_session

    def fixture_servers() -> list[psutil.Process]:
        return [
            p
            for p in psutil.Process().children(recursive=True)
            if p.is_running()
            and p.status() != psutil.STATUS_ZOMBIE
            and str(FIXTURE) in " ".join(p.cmdline())
        ]

    assert fixture_servers()  # the control: the window's server runs
    shown.window.close()
    session.close_at_quit()  # what ui.main.run does once Qt's loop has ended
    assert [i.status for i in session.server_infos()] == ["stopped"]
    assert fixture_servers() == []


def test_a_remote_chat_asks_and_names_its_tools_as_a_local_one(app, monkeypatch) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")  # keys: a file
    shown = app(["Unused."], tools=False)  # the local model takes no tools; the remote one does
    window, card = shown.window, shown.window.tools.card
    server = FakeServer(
        [
            Reply("Let me look that up.", (Call("fx__add", '{"a": 19, "b": 23}'),)),
            Reply("19 and 23 make 42."),
        ]
    )
    url = shown.loop.run_until_complete(server.start())
    try:
        shown.controller.connections.save(Connection("Lab", url), None)
        window.new_chat()
        cid = window.current_conversation_id
        shown.controller.update_settings(cid, model_id=RemoteModel("Lab", server.model).model_id)
        window.tools.conversation_shown()
        assert window.composer.tools.isEnabled()
        window.composer.edit.setPlainText("What is 19 + 23?")
        server.hold = asyncio.Event()  # the reply stays open once its call is written

        async def calling() -> None:
            window.composer.send()  # with the loop running: a remote reply starts only on it
            await until(lambda: _streaming_note(shown) == "Calling add on fx…", LIMIT_S)

        shown.loop.run_until_complete(calling())
        shown.shots("tools-remote-calling")
        shown.loop.run_until_complete(
            shown.signal(shown.controller.tool_flow.approvalNeeded, server.hold.set)
        )
        assert card.title.text() == "Run add from fx?"
        assert json.loads(card.arguments.toPlainText()) == {"a": 19, "b": 23}
        assert _calls_lines(window) == ['Called add("a": 19, "b": 23) on fx']
        shown.shots("tools-remote-approval")
        shown.idle(card.run_button.click)
        (result,) = shown.results()
        assert result.summary.startswith("add on fx · ")
        assert _calls_lines(window) == ['Called add("a": 19, "b": 23) on fx']
        assert server.requests[1]["messages"][-1]["content"] == "42"
        shown.shots("tools-remote-done")
    finally:
        shown.loop.run_until_complete(server.stop())


def _streaming_note(shown: App) -> str:
    message_id = shown.controller.streaming_message_id()
    widget = None if message_id is None else shown.window.chat_view.message_widget(str(message_id))
    return "" if widget is None or widget.badge is None else widget.badge.text()


def _calls_lines(window: QWidget) -> list[str]:
    return [w.text() for w in window.findChildren(QLabel, "ToolCallsLine") if w.isVisible()]
