"""The Import Chats dialog on its own (a real store file, no window): the preview's numbers for a
small ChatGPT export with branches, unticking a conversation, Cancel keeping whole
conversations only (and so does a dialog deleted mid-import, which hears nothing after), and
refusals shown with their reason."""

from __future__ import annotations

import json
import logging
import threading
import zipfile
from pathlib import Path
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import Qt

from app.importers import run
from app.store.conversations import Store
from tests.app.importers.samples import gpt_message, gpt_node
from tests.ui.dialogs.chat_exports import TITLES, chatgpt_export, conversation
from ui.dialogs.import_chats import ImportChatsDialog

_AFTER = 1_772_500_000.0  # after every message of the first export


def _dialog(qtbot, paths: list[Path], database: Path) -> ImportChatsDialog:
    dialog = ImportChatsDialog(paths, database)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def _wait_step(qtbot, dialog: ImportChatsDialog, step: str) -> None:
    qtbot.waitUntil(lambda: dialog.step == step, timeout=20000)


def _titles(database: Path) -> dict[str, int]:
    with Store.open(database) as store:
        return {c.title: len(store.all_messages(c.id)) for c in store.list_conversations()}


def test_the_preview_shows_what_the_export_holds_and_writes_nothing(qtbot, tmp_path: Path) -> None:
    export = chatgpt_export(tmp_path / "chatgpt-export.zip")
    database = tmp_path / "data" / "branchwise.sqlite3"
    dialog = _dialog(qtbot, [export], database)
    assert dialog.step == "reading" and "Nothing is written yet" in dialog.heading.text()
    _wait_step(qtbot, dialog, "preview")
    preview = dialog.preview
    assert preview.summary.text() == (
        "chatgpt-export.zip · ChatGPT: 3 conversations · 21 messages · 9 branches · "
        "2 Mar 2026 – 4 Mar 2026 · 1 attachment found, 1 not in the export (gone.jpg)"
    )
    rows = [(r.text(0), r.text(1), r.text(2)) for r in preview.rows()]
    assert rows == [(title, "7", "3") for title in TITLES]
    assert all(r.checkState(0) == Qt.CheckState.Checked for r in preview.rows())
    problems = preview.problems.toPlainText()
    assert "entry 4 is not a conversation (it has no message mapping)" in problems
    assert dialog.import_button.isVisible() and dialog.import_button.text() == (
        "Import 3 Conversations"
    )
    assert not database.exists()  # a preview writes nothing


def test_unticked_conversations_are_left_out(qtbot, tmp_path: Path) -> None:
    database = tmp_path / "branchwise.sqlite3"
    dialog = _dialog(qtbot, [chatgpt_export(tmp_path / "export.zip")], database)
    _wait_step(qtbot, dialog, "preview")
    dialog.preview.set_checked("Trip to Vienna", False)
    assert dialog.import_button.text() == "Import 2 Conversations"
    with qtbot.waitSignal(dialog.imported, timeout=20000) as done:
        qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    assert dialog.step == "report"
    assert _titles(database) == {"Greetings": 7, "Sourdough starter": 7}
    assert done.args[0].counts.imported == 2
    statuses = dialog.report.statuses()
    assert ("Imported", "Greetings", "7 messages") in statuses
    assert not any(title == "Trip to Vienna" for _, title, _ in statuses)
    # The project record is refused on its own, with its reason.
    assert any(s == "Refused" and "is not a conversation" in d for s, _, d in statuses)
    assert dialog.report.sentence.text() == "2 imported, 1 refused."
    assert dialog.undo_button.isVisible()


def test_cancel_keeps_only_whole_conversations(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "branchwise.sqlite3"
    dialog = _dialog(qtbot, [chatgpt_export(tmp_path / "export.zip")], database)
    _wait_step(qtbot, dialog, "preview")
    # The import thread waits after its first conversation until the person has pressed Cancel,
    # so the press lands mid-import however fast the machine is.
    pressed = threading.Event()
    import_paths = run.import_paths

    def import_then_wait(*args: Any, progress: Any, **kwargs: Any) -> run.ImportReport:
        def report(outcome: Any) -> None:
            progress(outcome)
            pressed.wait(20)

        return import_paths(*args, progress=report, **kwargs)

    monkeypatch.setattr(run, "import_paths", import_then_wait)
    dialog.start_import()
    qtbot.waitUntil(lambda: dialog.progress.value() == 1, timeout=20000)
    assert "1 of 3 done (“Greetings”)" in dialog.heading.text()
    assert dialog.isVisible()  # the window's event loop ran all along: nothing blocks it
    with qtbot.waitSignal(dialog.imported, timeout=20000) as done:
        qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
        assert dialog.heading.text().startswith("Cancelling")
        pressed.set()
    assert done.args[0].cancelled is True
    assert _titles(database) == {"Greetings": 7}  # whole, and nothing of the others
    assert dialog.report.sentence.text().startswith("Cancelled. Only whole conversations")
    assert dialog.heading.text() == "Import cancelled."


def test_a_refused_file_says_why_and_offers_no_import(qtbot, tmp_path: Path) -> None:
    hostile = tmp_path / "evil.zip"
    with zipfile.ZipFile(hostile, "w") as archive:
        archive.writestr("../../outside.json", "[]")
    plain = tmp_path / "notes.json"
    plain.write_text('{"shopping": ["milk"]}', encoding="utf-8")
    dialog = _dialog(qtbot, [hostile, plain], tmp_path / "branchwise.sqlite3")
    _wait_step(qtbot, dialog, "preview")
    problems = dialog.preview.problems.toPlainText()
    assert ".." in problems and "evil.zip" in problems
    assert "notes.json: no conversations of a known app were found" in problems
    assert dialog.heading.text() == "Nothing in these files can be imported."
    assert dialog.preview.summary.text() == "Nothing to import was found."
    assert not dialog.import_button.isEnabled()
    dialog.start_import()  # even if asked: nothing starts
    assert dialog.step == "preview"


def test_a_longer_export_updates_with_only_the_new_messages(qtbot, tmp_path: Path) -> None:
    database = tmp_path / "branchwise.sqlite3"
    export = chatgpt_export(tmp_path / "export.zip")
    first = _dialog(qtbot, [export], database)
    _wait_step(qtbot, first, "preview")
    with qtbot.waitSignal(first.imported, timeout=20000):
        first.start_import()
    longer = tmp_path / "later-export.zip"
    chats = [conversation(i, title) for i, title in enumerate(TITLES)]
    chats[0]["mapping"]["a2"]["children"] = ["u3"]
    chats[0]["mapping"]["u3"] = gpt_node(
        "u3", "a2", [], gpt_message("u3", "user", parts=["One more thing"], t=_AFTER)
    )
    chats[0]["current_node"] = "u3"
    with zipfile.ZipFile(longer, "w") as archive:
        archive.writestr("conversations.json", json.dumps(chats))
    second = _dialog(qtbot, [longer], database)
    _wait_step(qtbot, second, "preview")
    with qtbot.waitSignal(second.imported, timeout=20000):
        second.start_import()
    assert second.report.statuses() == [
        ("Updated", "Greetings", "1 new message"),
        ("Unchanged", "Trip to Vienna", "Already here: nothing new."),
        ("Unchanged", "Sourdough starter", "Already here: nothing new."),
    ]
    assert second.report.sentence.text() == (
        "0 imported, 1 updated with 1 new message in all, 2 unchanged."
    )
    assert _titles(database)["Greetings"] == 8


def test_a_store_that_cannot_be_written_is_said_in_words(qtbot, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    dialog = _dialog(
        qtbot, [chatgpt_export(tmp_path / "export.zip")], blocker / "branchwise.sqlite3"
    )
    _wait_step(qtbot, dialog, "preview")
    dialog.start_import()
    _wait_step(qtbot, dialog, "report")
    assert dialog.heading.text().startswith("The import could not go on: Could not create")
    assert dialog.close_button.isVisible() and not dialog.undo_button.isVisible()


def test_an_empty_conversation_cannot_be_ticked_and_is_reported_skipped(
    qtbot, tmp_path: Path
) -> None:
    empty = {
        "title": "Nothing said",
        "id": "conv-empty",
        "conversation_id": "conv-empty",
        "mapping": {"root": gpt_node("root", None, [], None)},
        "current_node": "root",
    }
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([conversation(0, "Greetings"), empty]), encoding="utf-8")
    database = tmp_path / "branchwise.sqlite3"
    dialog = _dialog(qtbot, [export], database)
    _wait_step(qtbot, dialog, "preview")
    greetings, nothing = dialog.preview.rows()
    assert greetings.checkState(0) == Qt.CheckState.Checked
    assert nothing.text(0) == "Nothing said (empty: skipped)"
    assert nothing.checkState(0) == Qt.CheckState.Unchecked and nothing.isDisabled()
    assert dialog.import_button.text() == "Import 1 Conversation"
    with qtbot.waitSignal(dialog.imported, timeout=20000):
        dialog.start_import()
    assert dialog.report.statuses() == [
        ("Imported", "Greetings", "7 messages"),
        ("Skipped", "Nothing said", "It has no messages."),
    ]
    assert _titles(database) == {"Greetings": 7}


def test_a_dialog_deleted_mid_import_cancels_it_and_reports_to_no_one(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    database = tmp_path / "branchwise.sqlite3"
    dialog = ImportChatsDialog([chatgpt_export(tmp_path / "export.zip")], database)
    dialog.show()
    _wait_step(qtbot, dialog, "preview")
    first_written, window_closed = threading.Event(), threading.Event()
    import_paths = run.import_paths

    def import_then_wait(*args: Any, progress: Any, **kwargs: Any) -> run.ImportReport:
        def report(outcome: Any) -> None:
            progress(outcome)
            first_written.set()
            window_closed.wait(20)

        return import_paths(*args, progress=report, **kwargs)

    monkeypatch.setattr(run, "import_paths", import_then_wait)
    dialog.start_import()
    operation = dialog.operation
    assert first_written.wait(20)
    shiboken6.delete(dialog)  # the window closing takes its dialogs with it
    assert operation.cancelled
    window_closed.set()
    assert operation.wait(20)
    qtbot.wait(100)  # anything still posted to the dialog would be delivered now
    assert _titles(database) == {"Greetings": 7}  # whole, and nothing after the cancel
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
