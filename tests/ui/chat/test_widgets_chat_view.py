"""The chat pane: empty state, cheap updates, streaming that follows the reply, long chats."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from tests.perf import RUNS, best_of
from ui.chat.chat_view import ChatView
from ui.chat.message_widget import MessageWidget
from ui.text.safe_browser import SafeBrowser
from ui.widgets.view_models import MessageView

REPLY = """Sure. Here is how it works:

1. Read the input.
2. Keep a **running total**.

```python
def total(values: list[int]) -> int:
    result = 0
    for value in values:
        result += value
    return result
```

That runs in `O(n)` time; see [the docs](https://docs.python.org/3/)."""


def conversation(count: int, tag: str = "") -> list[MessageView]:
    views = []
    for i in range(count // 2):
        views.append(MessageView(f"{tag}u{i}", "user", f"Question {i}: how would you do this?"))
        text = REPLY if i % 3 == 0 else f"A short answer number {i}, with *emphasis*."
        views.append(MessageView(f"{tag}a{i}", "assistant", text, stats={"generated_tokens": 9}))
    return views


@pytest.fixture
def chat(qtbot: QtBot) -> ChatView:
    view = ChatView()
    qtbot.addWidget(view)
    view.resize(720, 520)
    view.show()
    qtbot.waitExposed(view)
    return view


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The text of every Markdown render, in order."""
    seen: list[str] = []
    original = SafeBrowser.set_markdown

    def counting(self: SafeBrowser, text: str, dark: bool, streaming: bool = False) -> None:
        seen.append(text)
        original(self, text, dark, streaming)

    monkeypatch.setattr(SafeBrowser, "set_markdown", counting)
    return seen


def _at_bottom(chat: ChatView) -> bool:
    bar = chat.verticalScrollBar()
    return bar.value() == bar.maximum()


def _laid_out_at_bottom(chat: ChatView) -> bool:
    return chat.verticalScrollBar().maximum() > 0 and _at_bottom(chat)


def _top_in_viewport(chat: ChatView, widget: QWidget) -> int:
    return widget.mapTo(chat.viewport(), widget.rect().topLeft()).y()


def _visible_in_viewport(chat: ChatView, widget: QWidget) -> bool:
    return 0 <= _top_in_viewport(chat, widget) < chat.viewport().height()


def test_an_empty_chat_shows_a_friendly_placeholder(chat: ChatView) -> None:
    placeholder = chat.findChild(QWidget, "EmptyState")
    assert placeholder.isVisible()

    chat.set_messages(conversation(2))
    assert not placeholder.isVisible()

    chat.set_messages([])
    assert placeholder.isVisible()
    assert chat.built_count == 0


def test_unchanged_messages_keep_their_widgets_and_are_not_rendered_again(
    chat: ChatView, renders: list[str]
) -> None:
    views = conversation(4)
    chat.set_messages(views)
    kept = chat.message_widget("a0")
    renders.clear()

    edited = [*views[:3], replace(views[3], content="A new ending")]
    chat.set_messages([*edited, MessageView("u9", "user", "One more")])

    assert chat.message_widget("a0") is kept
    assert renders == ["A new ending"]
    assert chat.message_widget("u9").body.toPlainText() == "One more"

    chat.set_messages(edited[:2])
    assert chat.message_widget("u1") is None
    assert chat.built_count == 2


def test_message_signals_reach_the_chat_view(qtbot: QtBot, chat: ChatView) -> None:
    chat.set_messages(
        [MessageView("u1", "user", "Hi"), MessageView("a1", "assistant", "Hello", sibling_count=2)]
    )

    with qtbot.waitSignal(chat.regenerateRequested) as regenerate:
        chat.message_widget("a1").regenerate_button.click()
    with qtbot.waitSignal(chat.siblingRequested) as sibling:
        chat.message_widget("a1").nav.step(+1)
    with qtbot.waitSignal(chat.editSubmitted) as edit:
        chat.message_widget("u1").editSubmitted.emit("u1", "Hi again", [])

    assert regenerate.args == ["a1"]
    assert sibling.args == ["a1", 1]
    assert edit.args == ["u1", "Hi again", []]


def test_streaming_renders_only_the_streaming_message(chat: ChatView, renders: list[str]) -> None:
    views = [*conversation(6), MessageView("live", "assistant", "", status="streaming")]
    chat.set_messages(views)
    renders.clear()

    for text in ("Once", "Once upon", "Once upon a time"):
        chat.update_streaming("live", text)

    assert renders == ["Once", "Once upon", "Once upon a time"]
    assert chat.message_widget("live").body.toPlainText() == "Once upon a time"


def test_streaming_follows_the_reply_unless_the_person_scrolled_up(
    qtbot: QtBot, chat: ChatView
) -> None:
    live = MessageView("live", "assistant", "", status="streaming")
    views = [*conversation(4), live]
    chat.set_messages(views)
    assert chat.built_count == len(views)

    text = ""
    for i in range(15):
        text += f"Paragraph {i} of a long reply.\n\n"
        chat.update_streaming("live", text)
        qtbot.waitUntil(lambda: _at_bottom(chat))
    qtbot.waitUntil(lambda: _laid_out_at_bottom(chat))

    chat.verticalScrollBar().setValue(chat.verticalScrollBar().maximum() // 2)
    QApplication.processEvents()
    reading = next(w for w in chat.findChildren(MessageWidget) if _visible_in_viewport(chat, w))
    top = _top_in_viewport(chat, reading)
    old_maximum = chat.verticalScrollBar().maximum()
    for i in range(15, 30):
        text += f"Paragraph {i} of a long reply.\n\n"
        chat.update_streaming("live", text)
    qtbot.waitUntil(lambda: chat.verticalScrollBar().maximum() > old_maximum)

    assert _top_in_viewport(chat, reading) == top, "what the person reads stays in place"
    assert not _at_bottom(chat)
    chat.scroll_to_bottom()
    assert _at_bottom(chat)


# Messages are built as they are scrolled to, so a long chat opens about as fast as a short one
# (measured 1.1-1.2x); building all 500 would cost ten times the 50's.
MAX_LONG_OVER_SHORT = 3.0


@pytest.mark.perf
def test_a_500_message_conversation_opens_about_as_fast_as_a_50_message_one(
    chat: ChatView,
) -> None:
    app = QApplication.instance()
    chat.set_messages(conversation(4, "warm"))  # fonts and the highlighter's first use
    app.processEvents()
    attempts = iter(range(2 * RUNS))

    def opening_s(count: int) -> float:
        views = conversation(count, f"t{next(attempts)}-")  # new messages: nothing built yet
        start = time.perf_counter()
        chat.set_messages(views)
        app.processEvents()  # layout and paint: the conversation is on screen
        elapsed = time.perf_counter() - start
        assert chat.message_widget(views[-1].id).isVisible()
        return elapsed

    ratio = best_of(lambda: opening_s(500) / opening_s(50), MAX_LONG_OVER_SHORT)
    assert ratio < MAX_LONG_OVER_SHORT, f"500 messages took {ratio:.1f}x the time of 50"


def test_scrolling_up_reaches_the_first_message_of_a_long_chat(
    qtbot: QtBot, chat: ChatView
) -> None:
    views = conversation(80)
    chat.set_messages(views)
    assert chat.message_widget(views[0].id) is None, "old messages wait until needed"
    qtbot.waitUntil(lambda: _laid_out_at_bottom(chat))

    bar = chat.verticalScrollBar()
    for _ in range(200):
        if chat.message_widget(views[0].id) is not None:
            break
        before = chat.built_count
        bar.setValue(bar.minimum())
        # Older messages appear above, and the view stays where it was.
        qtbot.waitUntil(lambda b=before: chat.built_count > b and bar.value() > 0)

    first = chat.message_widget(views[0].id)
    assert first is not None
    bar.setValue(bar.minimum())
    qtbot.waitUntil(lambda: _visible_in_viewport(chat, first))


def test_building_older_messages_keeps_the_message_in_view_still(
    qtbot: QtBot, chat: ChatView
) -> None:
    views = conversation(120)
    chat.set_messages(views)
    qtbot.waitUntil(lambda: _laid_out_at_bottom(chat))
    oldest_built = next(v for v in views if chat.message_widget(v.id) is not None)
    widget = chat.message_widget(oldest_built.id)
    before = chat.built_count
    # Where it will be on screen once the view is scrolled to the top.
    top = widget.mapTo(chat.widget(), widget.rect().topLeft()).y()

    chat.verticalScrollBar().setValue(0)
    qtbot.waitUntil(lambda: chat.built_count > before and chat.verticalScrollBar().value() > 0)
    QApplication.processEvents()

    assert _top_in_viewport(chat, widget) == top


def test_jumping_to_an_old_message_builds_around_it_and_back_down(
    qtbot: QtBot, chat: ChatView
) -> None:
    views = conversation(100)
    chat.set_messages(views)
    target = views[10].id
    assert chat.message_widget(target) is None

    chat.scroll_to_message(target)

    widget = chat.message_widget(target)
    assert widget is not None
    qtbot.waitUntil(lambda: _visible_in_viewport(chat, widget))
    assert widget.property("highlighted") is True
    assert chat.built_count < 30, "not every message between the hit and the end"

    bar = chat.verticalScrollBar()
    for _ in range(100):
        if chat.message_widget(views[-1].id) is not None:
            break
        before = chat.built_count
        bar.setValue(bar.maximum())
        qtbot.waitUntil(lambda b=before: chat.built_count > b and not _at_bottom(chat))
    assert chat.message_widget(views[-1].id) is not None


def test_scroll_to_bottom_returns_to_the_newest_message_after_a_jump(
    qtbot: QtBot, chat: ChatView
) -> None:
    views = [*conversation(200), MessageView("live", "assistant", "", status="streaming")]
    chat.set_messages(views)
    chat.scroll_to_message(views[4].id)
    assert chat.message_widget("live") is None
    chat.update_streaming("live", "Written while the person read old messages")

    chat.scroll_to_bottom()

    live = chat.message_widget("live")
    assert live is not None
    assert live.body.toPlainText() == "Written while the person read old messages"
    qtbot.waitUntil(lambda: _laid_out_at_bottom(chat) and _visible_in_viewport(chat, live))


def test_a_low_height_guess_is_filled_in_and_streaming_still_follows(
    qtbot: QtBot, chat: ChatView
) -> None:
    # Twenty source lines that Markdown joins into one: far shorter than the text suggests.
    joined = "\n".join(f"word{i}" for i in range(20))
    views = [MessageView(f"j{i}", "assistant", joined) for i in range(60)]
    views.append(MessageView("live", "assistant", "", status="streaming"))
    chat.set_messages(views)
    first_guess = chat.built_count
    bar = chat.verticalScrollBar()
    # Filled until the person can scroll up by a whole screen.
    qtbot.waitUntil(lambda: bar.maximum() >= chat.viewport().height() and _at_bottom(chat))
    assert chat.built_count > first_guess

    text = ""
    for i in range(10):
        text += f"Line {i} of the reply.\n\n"
        chat.update_streaming("live", text)
        qtbot.waitUntil(lambda: _at_bottom(chat))
    assert _top_in_viewport(chat, chat.message_widget("live")) < chat.viewport().height()
