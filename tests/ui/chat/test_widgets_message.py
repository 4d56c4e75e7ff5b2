"""One message: its look per role, its actions, `‹ n/m ›`, editing, stats and status."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QPushButton, QToolButton, QWidget
from pytestqt.qtbot import QtBot

from ui.chat.message_state import LEFT_OUT_TIP
from ui.chat.message_widget import MessageWidget
from ui.chat.reply_stats import format_stats
from ui.text.safe_browser import SafeBrowser
from ui.widgets.view_models import MessageView

STATS = {
    "prompt_tokens": 160,
    "cached_tokens": 120,
    "prefill_tokens": 40,
    "generated_tokens": 42,
    "ttft_s": 0.21,
    "prefill_tps": 190.5,
    "decode_tps": 38.1,
}

Make = Callable[..., MessageWidget]


@pytest.fixture
def make(qtbot: QtBot) -> Make:
    def build(**fields: object) -> MessageWidget:
        view = MessageView(**{"id": "m1", "role": "assistant", "content": "Hello", **fields})
        widget = MessageWidget(view)
        qtbot.addWidget(widget)
        widget.resize(640, 240)
        widget.show()
        qtbot.waitExposed(widget)
        return widget

    return build


def _shown(widget: QWidget | None) -> bool:
    return widget is not None and widget.isVisible()


def _buttons(widget: MessageWidget) -> dict[str, QToolButton]:
    return {b.accessibleName(): b for b in widget.findChildren(QToolButton) if b.isVisible()}


def test_user_and_assistant_messages_look_different(make: Make) -> None:
    user = make(role="user", content="Hi there")
    reply = make(role="assistant", content="Hello!")

    assert user.objectName() == "UserMessage"
    assert reply.objectName() == "AssistantMessage"
    bubble = user.body.parentWidget()
    assert bubble.geometry().right() >= user.width() - 2, "a user bubble sits on the right"
    assert bubble.x() > user.width() / 2
    assert reply.body.mapTo(reply, reply.body.rect().topLeft()).x() == 0


def test_user_text_is_shown_literally_and_assistant_text_as_markdown(make: Make) -> None:
    source = "**not bold** <i>x</i> # no heading"
    user = make(role="user", content=source)
    reply = make(role="assistant", content="A **bold** word")

    assert user.body.toPlainText() == source
    assert reply.body.toPlainText() == "A bold word"
    assert reply.body.document().find("bold").charFormat().font().bold()


def test_actions_match_the_role(make: Make) -> None:
    user = make(role="user", content="Question")
    reply = make(role="assistant", content="Answer")

    delete = "Delete message and the replies below it"
    summarise = "Summarise up to here: a new branch goes on from a summary of the chat"
    assert set(_buttons(user)) == {
        "Copy message",
        "Compare with other models",
        "Edit message",
        summarise,
        delete,
    }
    details = "Details: where this reply came from, and Replay"
    assert set(_buttons(reply)) == {
        "Copy message",
        "Read aloud",
        "Regenerate reply",
        summarise,
        details,
        delete,
    }
    for button in _buttons(user).values():
        assert button.toolTip()


def test_copy_puts_the_raw_message_on_the_clipboard(qtbot: QtBot, make: Make) -> None:
    reply = make(content="Use `pip install x`, then **run** it.")

    qtbot.mouseClick(_buttons(reply)["Copy message"], Qt.MouseButton.LeftButton)

    assert QGuiApplication.clipboard().text() == "Use `pip install x`, then **run** it."


def test_delete_asks_to_delete_this_message(qtbot: QtBot, make: Make) -> None:
    user = make(id="u3", role="user", content="Question")

    with qtbot.waitSignal(user.deleteRequested) as request:
        qtbot.mouseClick(
            _buttons(user)["Delete message and the replies below it"], Qt.MouseButton.LeftButton
        )

    assert request.args == ["u3"]


def test_regenerate_asks_for_a_new_sibling_of_this_reply(qtbot: QtBot, make: Make) -> None:
    reply = make(id="r7")

    with qtbot.waitSignal(reply.regenerateRequested) as request:
        qtbot.mouseClick(_buttons(reply)["Regenerate reply"], Qt.MouseButton.LeftButton)

    assert request.args == ["r7"]


def test_sibling_navigation_shows_only_with_siblings(make: Make) -> None:
    single = make()
    branched = make(sibling_index=2, sibling_count=3)

    assert not _shown(single.nav)
    assert _shown(branched.nav)
    label = branched.nav.findChild(QLabel, "SiblingLabel")
    assert label.text() == "2/3"
    assert label.accessibleName() == "Version 2 of 3"


def test_sibling_arrows_emit_steps_and_stop_at_the_ends(qtbot: QtBot, make: Make) -> None:
    first = make(id="m5", sibling_index=1, sibling_count=2)
    buttons = _buttons(first)
    steps: list[tuple[str, int]] = []
    first.siblingRequested.connect(lambda mid, delta: steps.append((mid, delta)))

    assert not buttons["Previous version"].isEnabled()
    qtbot.mouseClick(buttons["Next version"], Qt.MouseButton.LeftButton)
    first.set_view(MessageView("m5", "assistant", "Other", sibling_index=2, sibling_count=2))
    assert not buttons["Next version"].isEnabled()
    qtbot.mouseClick(buttons["Previous version"], Qt.MouseButton.LeftButton)

    assert steps == [("m5", +1), ("m5", -1)]
    assert first.nav.findChild(QLabel, "SiblingLabel").text() == "2/2"


def test_alt_arrows_switch_versions_when_the_message_has_focus(qtbot: QtBot, make: Make) -> None:
    widget = make(id="m9", sibling_index=2, sibling_count=3)
    widget.activateWindow()
    widget.body.setFocus()
    qtbot.waitUntil(widget.body.hasFocus)
    steps: list[int] = []
    widget.siblingRequested.connect(lambda _mid, delta: steps.append(delta))

    qtbot.keyClick(widget.body, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    qtbot.keyClick(widget.body, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)

    assert steps == [-1, +1]


def test_editing_saves_a_new_text_for_this_message(qtbot: QtBot, make: Make) -> None:
    widget = make(id="u1", role="user", content="Old question")
    qtbot.mouseClick(_buttons(widget)["Edit message"], Qt.MouseButton.LeftButton)
    editor = widget.findChild(QPlainTextEdit, "InlineEditorText")
    save = next(b for b in widget.findChildren(QPushButton) if b.text() == "Save && send")

    assert widget.is_editing
    assert editor.toPlainText() == "Old question"
    assert not save.isEnabled(), "nothing changed yet"
    editor.setPlainText("New question")
    with qtbot.waitSignal(widget.editSubmitted) as submitted:
        qtbot.mouseClick(save, Qt.MouseButton.LeftButton)

    assert submitted.args == ["u1", "New question", []]
    assert not widget.is_editing
    assert widget.body.toPlainText() == "Old question", "the old version stays as it was"


def test_cancel_and_escape_leave_the_message_untouched(qtbot: QtBot, make: Make) -> None:
    widget = make(role="user", content="Keep me")
    edits: list[str] = []
    widget.editSubmitted.connect(lambda _mid, text, _images: edits.append(text))

    widget.start_editing()
    widget.findChild(QPlainTextEdit, "InlineEditorText").setPlainText("Changed")
    cancel = next(b for b in widget.findChildren(QPushButton) if b.text() == "Cancel")
    qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)
    assert not widget.is_editing

    widget.activateWindow()
    widget.start_editing()
    editor = widget.findChild(QPlainTextEdit, "InlineEditorText")
    qtbot.waitUntil(editor.hasFocus)
    qtbot.keyClick(editor, Qt.Key.Key_Escape)

    assert not widget.is_editing
    assert edits == []
    assert widget.body.toPlainText() == "Keep me"


def test_ctrl_enter_saves_an_edit_and_a_draft_can_be_restored(qtbot: QtBot, make: Make) -> None:
    widget = make(id="u2", role="user", content="Short")
    widget.activateWindow()
    widget.start_editing(draft="A draft the window kept")
    editor = widget.findChild(QPlainTextEdit, "InlineEditorText")
    qtbot.waitUntil(editor.hasFocus)

    with qtbot.waitSignal(widget.editSubmitted) as submitted:
        qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)

    assert submitted.args == ["u2", "A draft the window kept", []]


def test_stats_line_under_a_finished_reply() -> None:
    assert format_stats(STATS) == (
        "42 tokens · 38.1 tok/s · 0.21 s to first token · 120 reused from cache"
    )
    assert format_stats({"generated_tokens": 1200, "ttft_s": 12.34}) == (
        "1,200 tokens · 12.3 s to first token"
    )
    assert format_stats({"generated_tokens": 1}) == "1 token"  # not "1 tokens"


def test_stats_line_says_which_prompt_tokens_came_from_memory_and_from_disk() -> None:
    stats = {**STATS, "disk_tokens": 100}
    assert format_stats(stats) == (
        "42 tokens · 38.1 tok/s · 0.21 s to first token · "
        "120 reused (20 from memory, 100 from disk)"
    )


def test_a_reply_that_filled_the_context_says_so_never_a_silent_length(make: Make) -> None:
    stats = {**STATS, "finish_reason": "context"}
    assert format_stats(stats).startswith("42 tokens · context full · ")
    assert "context full" not in format_stats({**STATS, "finish_reason": "length"})
    widget = make(id="a1", stats=stats)
    assert "the model's context is full" in widget.stats_label.toolTip()


def test_a_message_left_out_of_the_models_view_is_dimmed_with_the_reason(make: Make) -> None:
    widget = make(id="u1", role="user", content="An early question", left_out=True)
    assert widget._bubble.graphicsEffect() is not None
    assert widget.body.toolTip() == LEFT_OUT_TIP
    assert "overflow setting" in widget.accessibleDescription()

    widget.set_view(replace(widget.view, left_out=False))  # a later reply sees it again
    assert widget._bubble.graphicsEffect() is None
    assert widget.body.toolTip() == ""


def test_stats_line_shows_the_share_of_drafted_tokens_accepted() -> None:
    drafted = {**STATS, "drafted_tokens": 40, "accepted_tokens": 30}
    assert format_stats(drafted) == (
        "42 tokens · 38.1 tok/s · 75% of drafted tokens accepted · 0.21 s to first token · "
        "120 reused from cache"
    )
    # Nothing drafted (speculation off, or nothing to copy): no share to show.
    assert "drafted" not in format_stats({**STATS, "drafted_tokens": 0, "accepted_tokens": 0})


def test_stats_show_when_the_reply_is_done_not_while_streaming(make: Make) -> None:
    widget = make(id="a1", status="streaming", content="Partial", stats=STATS)
    stats = widget.findChild(QLabel, "StatsLabel")
    assert not stats.isVisible()

    widget.set_view(MessageView("a1", "assistant", "Partial and done", stats=STATS))

    assert stats.isVisible()
    assert stats.text() == format_stats(STATS)
    assert "Reused from cache: 120 tokens" in stats.toolTip()


@pytest.mark.parametrize(
    ("status", "error", "expected"),
    [
        ("stopped", None, "Stopped"),
        ("error", "Out of memory.", "Error: Out of memory."),
        ("interrupted", None, "Interrupted: the app closed before this reply finished"),
    ],
)
def test_status_badges(make: Make, status: str, error: str | None, expected: str) -> None:
    widget = make(status=status, error=error)

    assert _shown(widget.badge)
    assert widget.badge.text() == expected


def test_a_reply_that_has_not_started_says_it_is_generating(make: Make) -> None:
    widget = make(status="streaming", content="")
    assert widget.badge.text() == "Generating…"
    assert not widget.findChild(QWidget, "MessageToolbar").isVisible()

    widget.set_content("First words")

    assert not widget.badge.isVisible()
    assert widget.body.toPlainText() == "First words"


def test_set_content_renders_the_streaming_text(make: Make) -> None:
    widget = make(status="streaming", content="")
    widget.set_content("```python\nprint(1)")

    assert "print(1)" in widget.body.toPlainText()
    assert "```" not in widget.body.toPlainText()


def test_a_system_prompt_is_shown_plainly_with_a_caption(make: Make) -> None:
    widget = make(role="system", content="You are **terse**.")

    assert widget.body.toPlainText() == "You are **terse**."
    assert widget.findChild(QLabel, "SystemCaption").text() == "System prompt"
    assert set(_buttons(widget)) == {"Copy message"}


def test_every_control_has_an_accessible_name_and_tooltip(make: Make) -> None:
    reply = make(sibling_index=1, sibling_count=2, stats=STATS)
    user = make(role="user", content="Question")
    user.start_editing()

    controls = [
        *reply.findChildren(QToolButton),
        *user.findChildren(QToolButton),
        *user.findChildren(QPushButton),
        user.findChild(QPlainTextEdit, "InlineEditorText"),
    ]
    assert len(controls) >= 8
    for control in controls:
        assert control.accessibleName(), control
        assert control.toolTip(), control.accessibleName()


def test_a_long_streaming_reply_rerenders_only_its_unfinished_end(
    make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    paragraph = "A sentence that keeps the reply going for a while. " * 4
    reply = "".join(f"## Part {i}\n\n{paragraph}\n\n```python\nx = {i}\n```\n\n" for i in range(20))
    widget = make(id="a1", status="streaming", content="")
    rendered: list[int] = []
    original = SafeBrowser.set_markdown

    def record(self: SafeBrowser, text: str, dark: bool, streaming: bool = False) -> None:
        rendered.append(len(text))
        original(self, text, dark, streaming)

    monkeypatch.setattr(SafeBrowser, "set_markdown", record)
    for end in range(40, len(reply) + 40, 40):
        widget.set_content(reply[:end])

    assert len(reply) > 4500
    assert max(rendered) < 1500, "each update renders a bounded piece, not the whole reply"
    streamed = [line for line in widget.shown_text.splitlines() if line.strip()]

    widget.set_view(MessageView("a1", "assistant", reply))
    assert len(widget.findChildren(SafeBrowser)) == 1, "a finished reply is one document"
    assert streamed == [line for line in widget.shown_text.splitlines() if line.strip()]


def test_the_newest_version_says_so_in_its_tooltip(make: Make) -> None:
    label = make(sibling_index=3, sibling_count=3).nav.findChild(QLabel, "SiblingLabel")
    assert label.toolTip() == "Version 3 of 3 (newest)"
    older = make(sibling_index=1, sibling_count=3).nav.findChild(QLabel, "SiblingLabel")
    assert older.toolTip() == "Version 1 of 3"


def test_a_new_version_shows_its_switcher_while_it_streams(make: Make) -> None:
    widget = make(content="", status="streaming", sibling_index=2, sibling_count=2)
    buttons = _buttons(widget)
    assert _shown(widget.nav) and buttons["Previous version"].isEnabled()
    assert "Regenerate reply" not in buttons and "Copy message" not in buttons  # not finished
    widget.set_view(MessageView("m1", "assistant", "Done", sibling_index=2, sibling_count=2))
    assert {"Regenerate reply", "Copy message"} <= set(_buttons(widget))


def test_enter_saves_an_edit_and_shift_enter_adds_a_line(qtbot: QtBot, make: Make) -> None:
    widget = make(id="u3", role="user", content="Short")
    widget.activateWindow()
    widget.start_editing()
    editor = widget.findChild(QPlainTextEdit, "InlineEditorText")
    qtbot.waitUntil(editor.hasFocus)
    editor.moveCursor(editor.textCursor().MoveOperation.End)

    qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(editor, "second line")
    assert widget.is_editing and editor.toPlainText() == "Short\nsecond line"
    with qtbot.waitSignal(widget.editSubmitted) as submitted:
        qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert submitted.args == ["u3", "Short\nsecond line", []]


def test_a_streaming_reply_shows_a_cursor_after_its_text_and_not_in_it(make: Make) -> None:
    widget = make(content="Once upon a time", status="streaming")
    cursor = widget.body.stream_cursor_rect()
    assert cursor is not None and cursor.left() > widget.body.fontMetrics().horizontalAdvance(
        "Once upon a"
    )
    assert widget.body.toPlainText() == "Once upon a time"
    widget.set_view(MessageView("m1", "assistant", "Once upon a time.", status="complete"))
    assert widget.body.stream_cursor_rect() is None


def test_a_long_message_of_the_person_is_collapsed_until_show_more(
    qtbot: QtBot, make: Make
) -> None:
    short = make(role="user", content="A short question")
    assert not _shown(short.more_button)
    text = "\n".join(f"Line {n} of a long paste" for n in range(1, 41))
    widget = make(role="user", content=text)
    widget.resize(640, 2000)
    more = widget.more_button
    assert _shown(more) and more.text() == "Show more"
    collapsed = widget.body.height()
    assert collapsed < widget.body.fontMetrics().lineSpacing() * 13
    qtbot.mouseClick(more, Qt.MouseButton.LeftButton)
    assert more.text() == "Show less" and widget.body.height() > collapsed * 3
    assert widget.body.toPlainText() == text  # collapsing hides, never cuts, the text
