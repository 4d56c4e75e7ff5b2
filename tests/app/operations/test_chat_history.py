"""The chat-history operations without a window: the import reports each conversation in order
and announces the conversations it wrote, its undo announces the ones it took out, a failure
reaches the caller in words, and a drop is sorted into exports and attachments."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtCore import QObject

from app.importers import run, writer
from app.operations.changes import Changes, app_changes
from app.operations.chat_history import (
    DroppedFiles,
    import_chats,
    sort_dropped,
    undo_import,
)
from app.operations.operation import Failure, FailureKind, Operation
from app.store.conversations import Store
from tests.ui.dialogs.chat_exports import TITLES, chatgpt_export

TIMEOUT_MS = 20000


@pytest.fixture
def heard() -> Iterator[list[Changes]]:
    """What the app-wide notifier announces during the test."""
    announced: list[Changes] = []
    view = QObject()
    app_changes().subscribe(view, announced.append)
    yield announced
    shiboken6.delete(view)


def _finish[R, P](qtbot, operation: Operation[R, P]) -> R | Failure:
    ended: list[R | Failure] = []
    operation.on_success(ended.append).on_failure(ended.append).start()
    qtbot.waitUntil(lambda: bool(ended), timeout=TIMEOUT_MS)
    return ended[0]


def test_an_import_reports_each_conversation_and_announces_what_it_wrote(
    qtbot, tmp_path: Path, heard: list[Changes]
) -> None:
    database = tmp_path / "branchwise.sqlite3"
    owner = QObject()
    progress: list[writer.Outcome] = []
    operation = import_chats(owner, database, [chatgpt_export(tmp_path / "export.zip")])
    report = _finish(qtbot, operation.on_progress(progress.append))
    assert isinstance(report, run.ImportReport)
    assert [o.title for o in progress if o.status == "imported"] == list(TITLES)
    assert progress == report.outcomes  # each outcome reported once, in order
    with Store.open(database) as store:
        written = {c.id for c in store.list_conversations()}
    assert heard == [Changes(conversations=frozenset(written), conversation_list=True)]

    # Its undo announces the conversations it took out.
    heard.clear()
    assert report.batch_id is not None
    undone = _finish(qtbot, undo_import(owner, database, report.batch_id))
    assert isinstance(undone, writer.UndoResult) and undone.removed_conversations == 3
    assert heard == [Changes(conversations=frozenset(written), conversation_list=True)]


def test_an_import_that_adds_nothing_announces_nothing(
    qtbot, tmp_path: Path, heard: list[Changes]
) -> None:
    database = tmp_path / "branchwise.sqlite3"
    export = chatgpt_export(tmp_path / "export.zip")
    owner = QObject()
    _finish(qtbot, import_chats(owner, database, [export]))
    heard.clear()
    again = _finish(qtbot, import_chats(owner, database, [export]))
    assert isinstance(again, run.ImportReport) and again.counts.unchanged == 3
    assert heard == []


def test_a_store_that_cannot_be_opened_is_a_failure_in_words(
    qtbot, tmp_path: Path, heard: list[Changes]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    owner = QObject()
    failure = _finish(
        qtbot,
        import_chats(
            owner, blocker / "branchwise.sqlite3", [chatgpt_export(tmp_path / "export.zip")]
        ),
    )
    assert isinstance(failure, Failure) and failure.kind is FailureKind.REFUSED
    assert failure.message.startswith("Could not create")
    assert heard == []


def test_a_drop_is_sorted_into_exports_and_attachments(qtbot, tmp_path: Path) -> None:
    export = chatgpt_export(tmp_path / "export.zip")
    notes = tmp_path / "notes.txt"
    notes.write_text("Buy milk.", encoding="utf-8")
    prices = tmp_path / "prices.json"
    prices.write_text('{"milk": 1.2}', encoding="utf-8")  # JSON, but no app's chats
    owner = QObject()
    threads: list[str] = []
    operation = sort_dropped(owner, [str(notes), str(export), str(prices)])
    operation.on_success(lambda _: threads.append(threading.current_thread().name))
    dropped = _finish(qtbot, operation)
    assert dropped == DroppedFiles((export,), (str(notes), str(prices)))
    assert threads == [threading.main_thread().name]
