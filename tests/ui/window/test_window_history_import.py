"""Chat history imported in the window: File › Import Chats and a drop open the preview (a
dropped .txt still attaches), the import lists the new conversations, Edit › Undo Import takes
them out, imported replies show their model label, reasoning, tool trace and missing files, and
continuing one uses the local model without sending the trace."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from tests.ui.dialogs.chat_exports import TITLES, chatgpt_export
from tests.ui.window_harness import OFFSCREEN_NOISE, ScriptedEngine, running_app, scripted_worker

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


def _drop(window, *paths: Path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    event = QDropEvent(
        QPointF(20, 20),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)


def _sidebar_titles(window) -> list[str]:
    model = window.sidebar.model
    return sorted(model.conversation(i).title for i in range(model.rowCount()))


def _import_all(qtbot, window, export: Path):
    dialog = window.history_import.open_preview([export])
    qtbot.waitUntil(lambda: dialog.step == "preview", timeout=20000)
    with qtbot.waitSignal(dialog.imported, timeout=20000):
        dialog.import_button.click()
    return dialog


def test_a_dropped_export_opens_the_preview_and_a_dropped_text_file_attaches(
    qtbot, tmp_path: Path
) -> None:
    export = chatgpt_export(tmp_path / "export.zip")
    notes = tmp_path / "notes.txt"
    notes.write_text("Buy milk.", encoding="utf-8")
    data = tmp_path / "prices.json"
    data.write_text('{"milk": 1.2}', encoding="utf-8")  # JSON, but no app's chats
    engine = ScriptedEngine([])
    with running_app(qtbot, tmp_path / "data", tmp_path / "model", scripted_worker(engine)) as app:
        window = app.window
        chips = window.composer.attached.files
        _drop(window, notes, export, data)
        qtbot.waitUntil(lambda: window.history_import.dialog is not None, timeout=20000)
        dialog = window.history_import.dialog
        assert dialog.paths == [export] and dialog.isVisible()
        qtbot.waitUntil(lambda: len(chips.chips) == 2, timeout=20000)
        assert sorted(c.name_label.text() for c in chips.chips) == ["notes.txt", "prices.json"]
        qtbot.waitUntil(lambda: dialog.step == "preview", timeout=20000)
        assert [r.text(0) for r in dialog.preview.rows()] == list(TITLES)
        assert window.store.list_conversations()[0].title != "Greetings"  # nothing written yet
        dialog.cancel_button.click()
        assert not dialog.isVisible()


def test_import_lists_the_chats_and_undo_import_takes_them_out(qtbot, tmp_path: Path) -> None:
    export = chatgpt_export(tmp_path / "export.zip")
    engine = ScriptedEngine([])
    with running_app(qtbot, tmp_path / "data", tmp_path / "model", scripted_worker(engine)) as app:
        window = app.window
        actions = window.menu_actions
        assert actions.import_chats.text() == "Import C&hats…"
        assert not actions.undo_import.isEnabled()  # nothing imported yet
        before = _sidebar_titles(window)
        dialog = _import_all(qtbot, window, export)
        assert _sidebar_titles(window) == sorted([*before, *TITLES])
        assert actions.undo_import.isEnabled() and dialog.undo_button.isVisible()

        # Importing the same file again adds nothing and offers nothing to undo.
        again = _import_all(qtbot, window, export)
        assert {s for s, _, _ in again.report.statuses()} == {"Unchanged", "Refused"}
        assert not again.undo_button.isVisible()
        assert window.history_import.batches == [dialog.batch_id]

        with qtbot.waitSignal(window.history_import.undoFinished, timeout=20000):
            actions.undo_import.trigger()
        assert _sidebar_titles(window) == before
        assert not actions.undo_import.isEnabled()
        assert not window.store.list_conversations() or all(
            c.title not in TITLES for c in window.store.list_conversations()
        )


def test_an_imported_chat_shows_its_labels_and_continues_with_the_local_model(
    qtbot, tmp_path: Path
) -> None:
    export = chatgpt_export(tmp_path / "export.zip")
    engine = ScriptedEngine(["Gern geschehen."])
    with running_app(qtbot, tmp_path / "data", tmp_path / "model", scripted_worker(engine)) as app:
        window = app.window
        _import_all(qtbot, window, export)
        greetings = next(c for c in window.store.list_conversations() if c.title == "Greetings")
        window.open_conversation(greetings.id)
        path = window.store.active_path(greetings.id)
        assert [m.content for m in path] == ["Hello?", "Hi there.", "Thanks", "Welcome."]
        first_reply = window.chat_view.message_widget(str(path[1].id))
        assert first_reply.stats_label.text() == "gpt-5-thinking"
        assert "continuing uses your chosen local model" in first_reply.stats_label.toolTip()
        thoughts = first_reply.thinking_section
        assert thoughts.isVisibleTo(first_reply) and not thoughts.expanded
        assert thoughts.text.toPlainText() == "They said hello."
        trace = first_reply.trace_section
        assert trace.isVisibleTo(first_reply) and not trace.expanded
        assert "1+1" in trace.text.toPlainText() and "2" in trace.text.toPlainText()
        trace.toggle.click()
        assert trace.text.isVisibleTo(first_reply)
        chips = window.chat_view.message_widget(str(path[2].id)).chips
        assert [(c.name_label.text(), c.details_label.text()) for c in chips.chips] == [
            ("cat.png", "4 B · 0 tokens"),
            ("gone.jpg", "not in the export"),
        ]

        window.composer.edit.setPlainText("Danke!")
        with qtbot.waitSignal(
            app.controller.busyChanged, timeout=20000, check_params_cb=lambda busy: not busy
        ):
            window.composer.send()
        (prompt,) = engine.prompts
        sent = "\n".join(m["content"] for m in prompt)
        assert "Hi there." in sent and "Danke!" in sent
        assert "1+1" not in sent and "They said hello." not in sent  # trace and reasoning
        assert "gone.jpg" not in sent and "cat.png" not in sent  # nothing to read in them
        reply = window.store.active_path(greetings.id)[-1]
        assert (reply.content, reply.model_id) == ("Gern geschehen.", "scripted")


def test_an_import_leaves_the_reply_being_written_alone(qtbot, tmp_path: Path) -> None:
    export = chatgpt_export(tmp_path / "export.zip")
    engine = ScriptedEngine(["word " * 2000], chars_per_step=5, step_s=0.01)
    with running_app(qtbot, tmp_path / "data", tmp_path / "model", scripted_worker(engine)) as app:
        window = app.window
        cid = window.current_conversation_id
        window.composer.edit.setPlainText("Write a lot.")
        window.composer.send()
        qtbot.waitUntil(lambda: bool(window.store.active_path(cid)[-1].content), timeout=20000)
        dialog = _import_all(qtbot, window, export)  # the window stays usable meanwhile
        assert window.current_conversation_id == cid  # a chat in use is not switched away
        assert app.controller.is_busy()
        assert window.store.active_path(cid)[-1].status == "streaming"
        assert dialog.report.sentence.text() == "3 imported, 1 refused."
        with qtbot.waitSignal(
            app.controller.busyChanged, timeout=20000, check_params_cb=lambda busy: not busy
        ):
            window.stream.request_stop()
        reply = window.store.active_path(cid)[-1]
        assert reply.status == "stopped" and reply.content.startswith("word word")


def test_undo_import_in_the_report(qtbot, tmp_path: Path) -> None:
    export = chatgpt_export(tmp_path / "export.zip")
    engine = ScriptedEngine([])
    with running_app(qtbot, tmp_path / "data", tmp_path / "model", scripted_worker(engine)) as app:
        window = app.window
        dialog = _import_all(qtbot, window, export)
        assert window.store.get_conversation(window.current_conversation_id).title == "Greetings"
        with qtbot.waitSignal(window.history_import.undoFinished, timeout=20000):
            dialog.undo_button.click()
        assert dialog.heading.text() == (
            "Import undone: 3 conversations and 21 messages taken out."
        )
        assert not dialog.undo_button.isVisible()
        assert not window.menu_actions.undo_import.isEnabled()
        titles = [c.title for c in window.store.list_conversations()]
        assert not set(titles) & set(TITLES)
        assert window.current_conversation_id in [c.id for c in window.store.list_conversations()]
