"""The tool card, a folded result and the tools button, as a person uses them: what they say,
what Run sends (edited arguments), bad JSON refused, hostile text shown literally."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.chat.tools.payloads import ToolCallCard, ToolWait
from app.mcp.tool_info import ServerStatus, ToolLabel
from ui.chat.tool_card import ToolCard
from ui.chat.tool_result import ToolResultView, calls_summary, result_summary
from ui.chat.tools_button import ServerChoice, ToolsButton
from ui.widgets.view_models import ToolCallView
from ui.window.stream_presenter import calling_note

HOSTILE = "<b>bold</b><img src=x><a href='file:///etc/passwd'>link</a>"
CALL = ToolCallCard(
    conversation_id=1,
    reply_id=2,
    call_id="c1",
    server="weather",
    tool="get_weather",
    model_name="weather__get_weather",
    arguments={"city": "Oslo"},
    description=HOSTILE,
    changed_from=None,
    repeated=False,
    waiting=ToolWait.APPROVAL,
)


def _card(qtbot: QtBot) -> ToolCard:
    card = ToolCard()
    qtbot.addWidget(card)
    card.show()
    return card


def test_run_sends_the_arguments_as_edited(qtbot: QtBot) -> None:
    card = _card(qtbot)
    card.ask(CALL)
    assert card.title.text() == "Run get_weather from weather?"
    assert card.description.text() == HOSTILE
    assert card.description.textFormat() == Qt.TextFormat.PlainText
    card.arguments.setPlainText('{"city": "Bergen"}')
    with qtbot.waitSignal(card.runRequested) as sent:
        card.run_button.click()
    assert sent.args == [{"city": "Bergen"}, ""]
    with qtbot.waitSignal(card.runRequested) as sent:
        card.always_chat.click()
    assert sent.args[1] == "chat"
    with qtbot.waitSignal(card.runRequested) as sent:
        card.always_tool.click()
    assert sent.args[1] == "tool"
    with qtbot.waitSignal(card.denyRequested):
        card.deny_button.click()


def test_arguments_that_are_not_a_json_object_cannot_run(qtbot: QtBot) -> None:
    card = _card(qtbot)
    card.ask(CALL)
    sent: list[Any] = []
    card.runRequested.connect(lambda *args: sent.append(args))
    card.arguments.setPlainText('{"city": ')
    assert not card.run_button.isEnabled() and "not valid JSON" in card.problem.text()
    card.arguments.setPlainText("[1, 2]")
    assert not card.always_tool.isEnabled() and "JSON object" in card.problem.text()
    card.run_button.click()
    assert sent == []
    card.arguments.setPlainText("{}")
    assert card.run_button.isEnabled() and card.problem.isHidden()


def test_a_changed_description_is_pointed_out(qtbot: QtBot) -> None:
    card = _card(qtbot)
    card.ask(replace(CALL, changed_from="Says hello."))
    assert card.changed.isVisible() and card.changed.text().endswith("Says hello.")
    card.ask(CALL)
    assert not card.changed.isVisible()


def test_a_repeated_call_is_pointed_out(qtbot: QtBot) -> None:
    card = _card(qtbot)
    card.ask(replace(CALL, repeated=True))
    assert card.changed.isVisible()
    assert card.changed.text().startswith("The model already made this same call")


def test_running_shows_cancel_and_the_limit_shows_continue(qtbot: QtBot) -> None:
    card = _card(qtbot)
    card.show_running(replace(CALL, waiting=ToolWait.RUNNING))
    assert card.title.text().startswith("Running get_weather on weather…")
    assert card.cancel_button.isVisible() and not card.run_button.isVisible()
    assert card.arguments.isReadOnly()
    with qtbot.waitSignal(card.cancelRequested):
        card.cancel_button.click()
    card.show_limit(8, 8)
    assert "8 tool calls" in card.title.text() and card.continue_button.isVisible()
    assert card.property("state") == "limit"  # what theme.qss colours the card's border by
    with qtbot.waitSignal(card.continueRequested):
        card.continue_button.click()
    card.clear()
    assert card.isHidden() and card.property("state") == ""


def test_a_result_opens_folded_and_unfolds(qtbot: QtBot) -> None:
    view = ToolResultView()
    qtbot.addWidget(view)
    view.show()
    view.set_result("get_weather", HOSTILE, {"duration_s": 0.25, "chars": 1234, "cut": 0})
    assert view.summary == "get_weather · 0.25 s · 1,234 characters"
    assert not view.text.isVisible()
    view.toggle.click()
    assert view.text.isVisible() and view.text.toPlainText() == HOSTILE
    view.edit_button.click()
    view.text.setPlainText("Snow")
    with qtbot.waitSignal(view.editSubmitted) as edited:
        view.save_button.click()
    assert edited.args == ["Snow"]
    with qtbot.waitSignal(view.rerunRequested):
        view.rerun_button.click()


def test_summaries_say_what_happened() -> None:
    assert result_summary("add", {"failure": "denied"}) == "add · denied"
    assert result_summary("f", {"failure": "timeout", "duration_s": 60.0, "chars": 30}) == (
        "f · timed out · 60 s · 30 characters"
    )
    assert result_summary("h", {"chars": 50000, "cut": 46000, "edited": True}) == (
        "h · 50,000 characters · 46,000 cut · edited by you"
    )
    # A tool by its own name and its server's; a call to no tool of the chat, as it was called.
    assert result_summary("add", {"server": "fx", "chars": 1}) == "add on fx · 1 character"
    assert result_summary("search_conversations", {"server": "branchwise"}) == (
        "search_conversations (built in)"
    )
    assert calls_summary(
        [ToolCallView("1", "add", '{"a": 2}', "fx"), ToolCallView("2", "nowhere__x", "{}")]
    ) == ('Called add("a": 2) on fx\nCalled nowhere__x()')


def test_a_call_being_written_is_shown_by_its_tools_own_name() -> None:
    assert calling_note(ToolLabel("fx", "add")) == "Calling add on fx…"
    assert calling_note(ToolLabel("", "nowhere__x")) == "Calling nowhere__x…"
    assert calling_note(ToolLabel("", "")) == "Calling a tool…"  # its name not written yet


def test_the_tools_button_lists_servers_and_says_why_it_is_off(qtbot: QtBot) -> None:
    button = ToolsButton()
    qtbot.addWidget(button)
    button.set_servers(
        [
            ServerChoice(
                "branchwise", "Built in", ServerStatus.READY, ("search_conversations",), True
            ),
            ServerChoice("w&x", "w&x", ServerStatus.FAILED, (), False),
        ]
    )
    assert button.isEnabled() and button.text() == "Tools · 1"
    texts = [a.text() for a in button.menu().actions()]
    assert texts[:2] == ["Built in", "    search_conversations"]
    assert "w&&x (failed)" in texts
    with qtbot.waitSignal(button.serversChosen) as chosen:
        next(a for a in button.menu().actions() if a.data() == "w&x").setChecked(True)
    assert chosen.args == [["branchwise", "w&x"]]
    button.set_servers([], off_reason="SmolLM2's chat template takes no tools.")
    assert not button.isEnabled() and "takes no tools" in button.toolTip()
