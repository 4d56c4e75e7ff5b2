"""The window with a reasoning model and attached files: the "Thinking…" section open while the
model thinks and folded once the answer starts, the person's own opening and folding, the Think
switch only for a template that reads one, and files attached by button, paste or drop shown as
chips, counted, sent in the prompt and still there after the file is gone."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from app.generation.think_settings import THINK
from tests.ui.window_harness import (
    OFFSCREEN_NOISE,
    ReasoningEngine,
    running_app,
    scripted_worker,
)
from ui.chat.thinking_section import ThinkingSection

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

REASONING = "The person asks for the capital of France. That is Paris; say so briefly."
ANSWER = "The capital of France is **Paris**."


def _last_widget(window):
    path = window.store.active_path(window.current_conversation_id)
    return window.chat_view.message_widget(str(path[-1].id))


def test_thinking_shows_open_then_folds_when_the_answer_starts(qtbot, tmp_path: Path) -> None:
    engine = ReasoningEngine([f"<think>\n{REASONING}\n</think>\n\n{ANSWER}"], step_s=0.03)
    with running_app(qtbot, tmp_path, tmp_path / "model", scripted_worker(engine)) as app:
        window = app.window
        window.composer.edit.setPlainText("What is the capital of France?")
        window.composer.send()

        def section() -> ThinkingSection | None:
            widget = _last_widget(window)
            return None if widget is None else widget.thinking_section

        qtbot.waitUntil(lambda: section() is not None and "capital" in section().text.toPlainText())
        assert section().expanded and section().summary == "Thinking…"
        assert section().text.isVisible()
        assert _last_widget(window).view.content == ""
        qtbot.waitUntil(lambda: "Paris" in _last_widget(window).view.content, timeout=10000)
        assert not section().expanded  # folded once the answer started
        qtbot.waitUntil(lambda: not app.controller.is_busy(), timeout=10000)

        reply = app.store.active_path(window.current_conversation_id)[-1]
        assert (reply.content, reply.reasoning) == (ANSWER, REASONING)
        widget = _last_widget(window)
        assert "<think>" not in widget.shown_text and "Paris" in widget.shown_text
        summary = widget.thinking_section.summary
        assert summary.startswith("Thought for ") and summary.endswith(" tokens")
        assert not widget.thinking_section.text.isVisible()
        qtbot.mouseClick(widget.thinking_section.toggle, Qt.MouseButton.LeftButton)
        assert widget.thinking_section.text.isVisible()
        assert widget.thinking_section.text.toPlainText() == REASONING
        # Opened, a short reasoning shows whole: as tall as its lines at the width it has now.
        editor = widget.thinking_section.text
        qtbot.waitUntil(
            lambda: (
                editor.height()
                >= editor.document().size().height() * editor.fontMetrics().lineSpacing()
            )
        )
        qtbot.mouseClick(widget.thinking_section.toggle, Qt.MouseButton.LeftButton)
        assert not widget.thinking_section.text.isVisible()

        # Reopened from the store, the reply's thoughts start folded, with their summary.
        window.open_conversation(app.controller.new_conversation())
        window.open_conversation(reply.conversation_id)
        reopened = _last_widget(window).thinking_section
        assert not reopened.expanded and reopened.summary == summary


def test_a_section_the_person_opened_stays_open(qtbot) -> None:
    section = ThinkingSection()
    qtbot.addWidget(section)
    section.show()
    section.set_reasoning("Hmm", True, {})
    assert section.expanded
    qtbot.mouseClick(section.toggle, Qt.MouseButton.LeftButton)  # folded by hand while thinking
    section.set_reasoning("Hmm, yes", True, {})
    assert not section.expanded
    section.set_expanded(True)
    section.set_reasoning("Hmm, yes", False, {"reasoning_s": 2.54, "reasoning_tokens": 1})
    assert section.expanded  # the answer started, but the person had chosen
    assert section.summary == "Thought for 2.5 s · 1 token"


def test_the_think_switch_shows_only_for_a_template_that_reads_one(qtbot, tmp_path: Path) -> None:
    plain = ReasoningEngine(["Hi."])
    with running_app(qtbot, tmp_path / "a", tmp_path / "model", scripted_worker(plain)) as app:
        assert not app.window.composer.think.isVisible()
        app.window.composer.edit.setPlainText("Hello")
        with qtbot.waitSignal(app.controller.busyChanged, check_params_cb=lambda b: not b):
            app.window.composer.send()
        assert plain.template_kwargs == [{}]  # nothing new reaches a plain template

    engine = ReasoningEngine(["One.", "Two."])
    worker = scripted_worker(
        engine,
        think_switch="enable_thinking",
        effort_switch="reasoning_effort",
        effort_levels=("low", "medium", "high"),
    )
    with running_app(qtbot, tmp_path / "b", tmp_path / "model", worker) as app:
        window = app.window
        think = window.composer.think
        qtbot.waitUntil(think.isVisible)
        assert think.think_button.isChecked()
        assert think.effort_box.currentText() == "Medium effort"
        window.composer.edit.setPlainText("Hello")
        with qtbot.waitSignal(app.controller.busyChanged, check_params_cb=lambda b: not b):
            window.composer.send()
        qtbot.mouseClick(think.think_button, Qt.MouseButton.LeftButton)
        think.effort_box.setCurrentIndex(2)
        think.effort_box.activated.emit(2)
        params = app.store.get_conversation(window.current_conversation_id).params
        assert params[THINK] is False and params["reasoning_effort"] == "high"
        window.composer.edit.setPlainText("Again")
        with qtbot.waitSignal(app.controller.busyChanged, check_params_cb=lambda b: not b):
            window.composer.send()
        assert engine.template_kwargs == [
            {"enable_thinking": True, "reasoning_effort": "medium"},
            {"enable_thinking": False, "reasoning_effort": "high"},
        ]


def _files(tmp_path: Path) -> tuple[Path, Path]:
    notes = tmp_path / "notes.md"
    notes.write_text("# Trip\nTake the night train to Vienna.\n")
    table = tmp_path / "prices.csv"
    table.write_text("route,price\nParis-Vienna,89\nParis-Berlin,59\n")
    return notes, table


def _mime(*paths: Path) -> QMimeData:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    return mime


def test_files_attach_by_paste_and_drop_and_survive_being_deleted(qtbot, tmp_path: Path) -> None:
    engine = ReasoningEngine(["Vienna it is.", "Still Vienna."])
    notes, table = _files(tmp_path)
    with running_app(qtbot, tmp_path / "data", tmp_path / "model", scripted_worker(engine)) as app:
        window = app.window
        composer = window.composer
        composer.edit.insertFromMimeData(_mime(notes))  # pasted
        qtbot.waitUntil(lambda: len(composer.attached.files.chips) == 1)
        dropped = _mime(table)  # kept alive: the event only points at it
        drop = QDropEvent(
            QPointF(20, 20),
            Qt.DropAction.CopyAction,
            dropped,
            Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.NoModifier,
        )
        window.dropEvent(drop)  # dropped anywhere on the window
        qtbot.waitUntil(lambda: len(composer.attached.files.chips) == 2)
        chip = composer.attached.files.chips[0]
        assert chip.name_label.text() == "notes.md"
        size = notes.stat().st_size
        assert chip.details_label.text().startswith(f"{size} B · ")
        assert chip.details_label.text().endswith(" tokens")

        # The token meter counts the files.
        qtbot.waitUntil(lambda: composer.token_label.isVisible())
        with_files = composer.token_label.text()
        qtbot.mouseClick(composer.attached.files.chips[1].remove_button, Qt.MouseButton.LeftButton)
        assert [c.name_label.text() for c in composer.attached.files.chips] == ["notes.md"]
        qtbot.waitUntil(lambda: composer.token_label.text() != with_files)
        composer.attachRequested.emit([str(table)])  # the paperclip's file dialog asks so
        qtbot.waitUntil(lambda: len(composer.attached.files.chips) == 2)

        composer.edit.setPlainText("Which route?")
        with qtbot.waitSignal(app.controller.busyChanged, check_params_cb=lambda b: not b):
            composer.send()
        assert composer.attached.files.chips == [] and composer.attachments() == []
        prompt = engine.prompts[-1][-1]["content"]
        assert prompt.startswith("Attached file: notes.md\n```markdown\n# Trip")
        assert "Attached file: prices.csv\n```csv\nroute,price" in prompt
        assert prompt.endswith("\n\nWhich route?")
        user = app.store.active_path(window.current_conversation_id)[0]
        shown = window.chat_view.message_widget(str(user.id))
        assert [c.name_label.text() for c in shown.chips.chips] == ["notes.md", "prices.csv"]
        assert shown.chips.chips[0].remove_button is None  # sent: no longer removable
        qtbot.mouseClick(shown.chips.chips[1], Qt.MouseButton.LeftButton)
        assert "Paris-Vienna,89" in shown.chips.preview.text.toPlainText()
        shown.chips.preview.close()

        notes.unlink()
        table.unlink()
        reply = app.store.active_path(window.current_conversation_id)[-1]
        with qtbot.waitSignal(app.controller.busyChanged, check_params_cb=lambda b: not b):
            app.controller.regenerate(reply.id)
        assert engine.prompts[-1][-1]["content"] == prompt


def test_files_that_cannot_be_attached_are_refused_by_name(qtbot, tmp_path: Path) -> None:
    engine = ReasoningEngine([])
    engine.context_length = 64
    blob = tmp_path / "photo.raw"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    picture = tmp_path / "photo.png"  # an image by its name: kept as an image, if it is one
    picture.write_bytes(blob.read_bytes())
    long = tmp_path / "long.txt"
    long.write_text("word " * 400)
    with running_app(qtbot, tmp_path / "data", tmp_path / "model", scripted_worker(engine)) as app:
        window = app.window
        window.composer.attachRequested.emit([str(blob)])
        qtbot.waitUntil(lambda: "photo.raw is a binary file" in window.banner.text)
        window.composer.attachRequested.emit([str(picture)])
        qtbot.waitUntil(lambda: "photo.png is damaged or truncated" in window.banner.text)
        window.composer.attachRequested.emit([str(long)])
        qtbot.waitUntil(lambda: window.banner.text.startswith("long.txt needs "))
        assert "context of 64 tokens" in window.banner.text
        assert window.composer.attached.files.chips == []
        assert window.composer.attached.images.chips == []
