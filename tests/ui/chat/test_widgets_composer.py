"""The composer: keys, Send/Stop, disabled while the model loads, context-window warnings."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QMimeData, Qt
from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from ui.chat.composer import Composer


@pytest.fixture
def composer(qtbot: QtBot) -> Composer:
    widget = Composer()
    qtbot.addWidget(widget)
    widget.resize(600, 160)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _type(qtbot: QtBot, composer: Composer, text: str) -> None:
    qtbot.keyClicks(composer.edit, text)


def test_enter_sends_the_message_and_clears_the_box(qtbot: QtBot, composer: Composer) -> None:
    _type(qtbot, composer, "Hello there")

    with qtbot.waitSignal(composer.sendRequested) as sent:
        qtbot.keyClick(composer.edit, Qt.Key.Key_Return)

    assert sent.args == ["Hello there"]
    assert composer.text() == ""


def test_shift_enter_adds_a_line_instead_of_sending(qtbot: QtBot, composer: Composer) -> None:
    sent: list[str] = []
    composer.sendRequested.connect(sent.append)
    _type(qtbot, composer, "first")
    qtbot.keyClick(composer.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    _type(qtbot, composer, "second")

    assert composer.text() == "first\nsecond"
    assert sent == []
    qtbot.keyClick(composer.edit, Qt.Key.Key_Enter)  # the keypad's Enter sends too
    assert sent == ["first\nsecond"]


def test_blank_messages_are_not_sent(qtbot: QtBot, composer: Composer) -> None:
    sent: list[str] = []
    composer.sendRequested.connect(sent.append)
    _type(qtbot, composer, "   ")

    qtbot.keyClick(composer.edit, Qt.Key.Key_Return)

    assert sent == []
    assert not composer.button.isEnabled()


def test_the_button_sends_then_becomes_stop_while_generating(
    qtbot: QtBot, composer: Composer
) -> None:
    _type(qtbot, composer, "Question")
    assert composer.button.accessibleName() == "Send message"
    with qtbot.waitSignal(composer.sendRequested):
        qtbot.mouseClick(composer.button, Qt.MouseButton.LeftButton)

    composer.set_generating(True)
    assert composer.button.accessibleName() == "Stop generating"
    assert composer.button.isEnabled()
    with qtbot.waitSignal(composer.stopRequested):
        qtbot.mouseClick(composer.button, Qt.MouseButton.LeftButton)

    composer.set_generating(False)
    assert composer.button.accessibleName() == "Send message"


def test_escape_stops_a_reply_and_enter_waits_until_it_is_done(
    qtbot: QtBot, composer: Composer
) -> None:
    sent: list[str] = []
    composer.sendRequested.connect(sent.append)
    composer.set_generating(True)
    _type(qtbot, composer, "Next question")

    qtbot.keyClick(composer.edit, Qt.Key.Key_Return)
    assert sent == []
    assert composer.text() == "Next question", "the draft is kept"
    with qtbot.waitSignal(composer.stopRequested):
        qtbot.keyClick(composer.edit, Qt.Key.Key_Escape)

    composer.set_generating(False)
    qtbot.keyClick(composer.edit, Qt.Key.Key_Return)
    assert sent == ["Next question"]


def test_escape_does_nothing_when_no_reply_is_running(qtbot: QtBot, composer: Composer) -> None:
    stops: list[bool] = []
    composer.stopRequested.connect(lambda: stops.append(True))

    qtbot.keyClick(composer.edit, Qt.Key.Key_Escape)

    assert stops == []


def test_disabled_while_the_model_loads_and_says_why(qtbot: QtBot, composer: Composer) -> None:
    _type(qtbot, composer, "Draft")
    composer.set_enabled_reason("Loading SmolLM2-135M… 40%")

    assert not composer.edit.isEnabled()
    assert not composer.button.isEnabled()
    assert composer.notice.isVisible()
    assert composer.notice.text() == "Loading SmolLM2-135M… 40%"
    assert composer.button.toolTip() == "Loading SmolLM2-135M… 40%"

    composer.set_enabled_reason(None)
    assert composer.edit.isEnabled()
    assert not composer.notice.isVisible()
    assert composer.text() == "Draft"


def test_token_count_is_shown_quietly_when_there_is_room(composer: Composer) -> None:
    composer.set_token_info(312, 2048)

    assert composer.token_label.isVisible()
    assert composer.token_label.text() == "312 / 2,048 tokens"
    assert not composer.notice.isVisible()

    composer.set_token_info(None, None)
    assert not composer.token_label.isVisible()


def test_near_the_context_window_it_says_the_reply_will_be_short(composer: Composer) -> None:
    composer.set_token_info(1900, 2048)

    assert composer.notice.isVisible()
    assert composer.notice.text() == (
        "Near the 2,048-token context: the prompt takes 1,900 tokens, "
        "so the reply will stop after at most 148 tokens."
    )
    assert composer.can_send


def test_over_the_context_window_it_explains_and_blocks_sending(
    qtbot: QtBot, composer: Composer
) -> None:
    sent: list[str] = []
    composer.sendRequested.connect(sent.append)
    _type(qtbot, composer, "A very long paste")
    composer.set_token_info(2168, 2048)

    assert composer.notice.text() == (
        "Over the 2,048-token context by 120 tokens: the reply cannot start; "
        "shorten the message or start a new chat."
    )
    qtbot.keyClick(composer.edit, Qt.Key.Key_Return)
    assert sent == []
    assert composer.text() == "A very long paste"
    assert not composer.button.isEnabled()

    composer.set_token_info(900, 2048)
    qtbot.keyClick(composer.edit, Qt.Key.Key_Return)
    assert sent == ["A very long paste"]


def test_the_box_grows_with_the_text_up_to_eight_lines(composer: Composer) -> None:
    heights = []
    for lines in range(1, 13):
        composer.set_text("\n".join(["line"] * lines))
        heights.append(composer.edit.height())

    growing, capped = heights[:8], heights[7:]
    assert growing == sorted(set(growing)), "each new line makes it taller"
    assert set(capped) == {heights[7]}, "then it scrolls instead"
    assert composer.edit.verticalScrollBar().maximum() > 0


def test_typing_reports_the_draft_for_token_counting(qtbot: QtBot, composer: Composer) -> None:
    drafts: list[str] = []
    composer.draftChanged.connect(drafts.append)

    _type(qtbot, composer, "abc")

    assert drafts == ["a", "ab", "abc"]


def test_every_control_has_an_accessible_name_and_tooltip(composer: Composer) -> None:
    for control in (composer.edit, composer.button, composer.token_label):
        assert control.accessibleName()
        assert control.toolTip()


def test_the_meter_warns_at_90_percent_and_at_100_percent_by_the_chats_policy(
    composer: Composer,
) -> None:
    composer.set_token_info(1800, 2048, "truncate_middle")  # 88 %: quiet
    assert not composer.notice.isVisible()
    assert composer.token_label.property("kind") == ""

    composer.set_token_info(1850, 2048, "truncate_middle")  # 90 %
    assert composer.token_label.property("kind") == "warning"
    assert composer.notice.text() == (
        "Near the 2,048-token context: the prompt takes 1,850 tokens. Once it is full, turns "
        "from the middle of the chat are left out of the model's view."
    )

    composer.set_token_info(2048, 2048, "rolling")  # 100 %
    assert composer.token_label.property("kind") == "danger"
    assert composer.notice.text() == (
        "The 2,048-token context is full (2,048 tokens): the oldest turns are left out of the "
        "model's view (dimmed), and the reply still gets room."
    )
    composer.set_token_info(2500, 2048, "rolling")
    assert composer.can_send, "turns are left out: the message can still be sent"

    composer.set_token_info(2500, 2048, "stop")
    assert not composer.can_send
    assert "the reply cannot start" in composer.notice.text()


def test_a_pasted_picture_is_attached_unless_text_came_with_it(
    qtbot: QtBot, composer: Composer
) -> None:
    picture = QImage(8, 6, QImage.Format.Format_RGB32)
    picture.fill(QColor("teal"))
    screenshot = QMimeData()
    screenshot.setImageData(picture)
    screenshot.setHtml('<img src="https://example.com/a.png">')  # a browser's "Copy image"
    with qtbot.waitSignal(composer.imagePasted) as pasted:
        composer.edit.insertFromMimeData(screenshot)
    assert QImage.fromData(pasted.args[0], "PNG").size() == picture.size()
    assert composer.text() == ""

    cells = QMimeData()  # a spreadsheet's copy: the cells' text, and a picture of them
    cells.setImageData(picture)
    cells.setText("Paris\t89")
    with qtbot.assertNotEmitted(composer.imagePasted):
        composer.edit.insertFromMimeData(cells)
    assert composer.text() == "Paris\t89"
