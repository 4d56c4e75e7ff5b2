"""No typed or generated text is ever lost: a reply whose final write fails is retried, kept in a
recovery file at close and put back at the next start; a process killed mid-reply keeps what was
flushed; the composer's draft survives a switch, a restart and a kill -9."""

from __future__ import annotations

import gc
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest

from app.store import reply_recovery
from app.store import schema as store_schema
from app.store.conversations import Message, Store, StoreError
from tests.paths import ROOT
from tests.ui.window_harness import (
    ScriptedEngine,
    running_app,
    scripted_worker,
    send_and_wait,
    start_app,
)

DISK_FULL = "The conversation database could not be used: database or disk is full."
CALL = {"id": "call_1", "name": "fx__add", "arguments": {"a": 19, "b": 23}}


def _reply(store: Store) -> Message:
    conversation = store.create_conversation()
    question = store.append_message(conversation.id, None, "user", "tell me a story")
    return store.begin_reply(conversation.id, question.id, "model", {"temperature": 0.0})


def _on_disk(path: Path, message_id: int) -> tuple[str, str] | None:
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute(
            "SELECT content, status FROM messages WHERE id = ?", (message_id,)
        ).fetchone()


def _refuse_final_writes(monkeypatch: pytest.MonkeyPatch, store: Store) -> list[int]:
    refused: list[int] = []

    def disk_full(message_id: int, *args: Any, **kwargs: Any) -> Message:
        refused.append(message_id)
        raise StoreError(DISK_FULL)

    monkeypatch.setattr(store, "finish_reply", disk_full)
    return refused


def _integrity(path: Path) -> list[tuple[str]]:
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("INSERT INTO message_search(message_search) VALUES ('integrity-check')")
        return conn.execute("PRAGMA integrity_check").fetchall()


# ---- the store: a failed final write -----------------------------------------------------------


def test_a_writer_nobody_holds_still_reaches_the_disk_at_close(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    store = Store.open(path)
    writer = store.reply_writer(_reply(store).id, interval_s=3600)
    message_id = writer.message_id
    writer.append("only in memory")
    del writer
    gc.collect()
    store.close()
    assert _on_disk(path, message_id) == ("only in memory", "interrupted")


def test_a_failed_final_write_is_retried_with_its_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "db.sqlite3"
    store = Store.open(path)
    writer = store.reply_writer(_reply(store).id, interval_s=3600)
    writer.append("the whole answer")
    _refuse_final_writes(monkeypatch, store)
    with pytest.raises(StoreError, match="disk is full"):
        writer.finish("complete", stats={"generated_tokens": 3})
    assert not writer.done and writer.final == ("complete", {"generated_tokens": 3}, None)
    assert _on_disk(path, writer.message_id) == ("", "streaming")
    monkeypatch.undo()  # the disk has room again
    saved = writer.retry_finish()
    assert (saved.content, saved.status, saved.stats) == (
        "the whole answer",
        "complete",
        {"generated_tokens": 3},
    )
    store.close()
    assert _on_disk(path, writer.message_id) == ("the whole answer", "complete")


def test_close_writes_a_refused_reply_with_the_status_it_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "db.sqlite3"
    store = Store.open(path)
    writer = store.reply_writer(_reply(store).id, interval_s=3600)
    writer.append("stopped here")
    _refuse_final_writes(monkeypatch, store)
    with pytest.raises(StoreError):
        writer.finish("stopped")
    monkeypatch.undo()
    store.close()
    assert _on_disk(path, writer.message_id) == ("stopped here", "stopped")
    assert not reply_recovery.recovery_path(path).exists()


def _close_with_the_disk_full(path: Path, monkeypatch: pytest.MonkeyPatch) -> Message:
    """A reply streamed (half of it flushed), its final write and every retry refused."""
    store = Store.open(path)
    writer = store.reply_writer(_reply(store).id, interval_s=3600)
    writer.append("flushed half, ", reasoning="First I think, ")
    writer.flush()
    writer.append("and the unsaved tail", reasoning="then I call.")
    refused = _refuse_final_writes(monkeypatch, store)
    with pytest.raises(StoreError):
        writer.finish(
            "complete",
            stats={"generated_tokens": 5},
            tool_calls=[CALL],
            provenance={"seed": 3, "token_ids": [1, 2]},
        )
    store.close()
    monkeypatch.undo()
    assert refused == [writer.message_id, writer.message_id], "retried once at close"
    assert _on_disk(path, writer.message_id) == ("flushed half, ", "streaming")
    return writer.message


def test_a_reply_refused_until_close_comes_back_at_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "db.sqlite3"
    begun = _close_with_the_disk_full(path, monkeypatch)
    recovery = reply_recovery.recovery_path(path)
    assert recovery.parent == tmp_path and recovery.exists()
    kept = json.loads(recovery.read_text(encoding="utf-8"))["replies"]
    assert [r["content"] for r in kept] == ["flushed half, and the unsaved tail"]

    with Store.open(path) as store:
        reply = store.get_message(begun.id)
        assert (reply.content, reply.status) == ("flushed half, and the unsaved tail", "complete")
        assert reply.stats == {"generated_tokens": 5}
        # The whole reply: its reasoning and the call it ended with came back too.
        assert (reply.reasoning, reply.tool_calls) == ("First I think, then I call.", (CALL,))
        assert reply.provenance == {"seed": 3, "token_ids": [1, 2]}
        assert store.active_path(begun.conversation_id)[-1].id == begun.id
        assert store.recovery_report and "put back" in store.recovery_report
        assert [h.message_id for h in store.search("unsaved tail")] == [begun.id]
    assert not recovery.exists()
    with Store.open(path) as store:
        assert store.recovery_report is None
    assert _integrity(path) == [("ok",)]


def test_putting_back_is_idempotent_and_recreates_a_deleted_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "db.sqlite3"
    begun = _close_with_the_disk_full(path, monkeypatch)
    recovery = reply_recovery.recovery_path(path)
    saved_file = recovery.read_bytes()
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("DELETE FROM messages WHERE id = ?", (begun.id,))
        conn.execute(
            "UPDATE conversations SET active_leaf_id = ? WHERE id = ?",
            (begun.parent_id, begun.conversation_id),
        )
    for _ in range(2):  # the second time as if deleting the file had failed
        with Store.open(path) as store:
            replies = store.children(begun.parent_id)
            assert [(m.content, m.status, m.reasoning, m.tool_calls) for m in replies] == [
                (
                    "flushed half, and the unsaved tail",
                    "complete",
                    "First I think, then I call.",
                    (CALL,),
                )
            ]
            assert store.active_path(begun.conversation_id)[-1].id == replies[0].id
        recovery.write_bytes(saved_file)


def test_a_reply_with_nowhere_to_go_stays_in_the_file_and_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "db.sqlite3"
    begun = _close_with_the_disk_full(path, monkeypatch)
    with Store.open(path) as store:
        store.delete_conversation(begun.conversation_id)
        store.purge_deleted()
    # That open already put the reply back, and the purge removed it: lose it again by hand.
    reply_recovery.write(
        reply_recovery.recovery_path(path),
        [
            reply_recovery.UnsavedReply(
                begun.id,
                begun.conversation_id,
                begun.parent_id or 0,
                "homeless text",
                begun.created_at,
                "complete",
                None,
                {},
                {},
                None,
            )
        ],
    )
    with Store.open(path) as store:
        assert store.recovery_report and "no longer exist" in store.recovery_report
        assert store.recovery_report.startswith("1 reply that could not be saved")
        assert store.list_conversations() == []
    assert "homeless text" in reply_recovery.recovery_path(path).read_text(encoding="utf-8")


def test_an_unreadable_recovery_file_is_kept_and_the_store_opens(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    Store.open(path).close()
    recovery = reply_recovery.recovery_path(path)
    recovery.write_text('{"replies": [{"content": "half a', encoding="utf-8")
    with Store.open(path) as store:
        assert store.recovery_report and "could not be read" in store.recovery_report
        store.create_conversation("still usable")
    assert recovery.read_text(encoding="utf-8") == '{"replies": [{"content": "half a'


# ---- the app: a failed final write while generating -------------------------------------------


def test_a_failed_final_write_keeps_the_text_on_screen_and_saves_it_later(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    story = "Once upon a time there was a reply the disk would not take. " * 4
    engine = ScriptedEngine([story], chars_per_step=8, step_s=0.002)
    with running_app(qtbot, tmp_path, tmp_path / "scripted", scripted_worker(engine)) as app:
        store, window = app.controller.store, app.window
        refused = _refuse_final_writes(monkeypatch, store)
        notices: list[str] = []
        app.controller.notice.connect(notices.append)
        send_and_wait(qtbot, app, "Tell me a story")
        assert not app.controller.is_busy(), "a failed final write must not leave the app busy"
        assert refused and any("could not be saved" in n for n in notices)
        reply_id = refused[0]
        widget = window.chat_view.message_widget(str(reply_id))
        qtbot.waitUntil(lambda: widget.body.toPlainText().strip() == story.strip(), timeout=5000)
        assert store.get_message(reply_id).status == "streaming"

        monkeypatch.undo()  # the disk has room again: the next retry (each second) saves it
        qtbot.waitUntil(lambda: store.get_message(reply_id).status == "complete", timeout=5000)
        assert store.get_message(reply_id).content == story
        assert any("has now been saved" in n for n in notices)


def test_an_unexpected_error_while_finishing_never_leaves_the_app_busy(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = ScriptedEngine(["A reply met by a bug."], chars_per_step=8, step_s=0.002)
    with running_app(qtbot, tmp_path, tmp_path / "scripted", scripted_worker(engine)) as app:
        store = app.controller.store

        def bug(*args: Any, **kwargs: Any) -> Message:
            raise RuntimeError("a bug in the finish path")

        monkeypatch.setattr(store, "finish_reply", bug)
        with qtbot.captureExceptions() as raised:
            send_and_wait(qtbot, app, "Hello")
        assert [str(e[1]) for e in raised] == ["a bug in the finish path"]
        assert not app.controller.is_busy()
        assert app.window.composer.button.accessibleName() == "Send message"
        reply_id = app.controller.store.active_path(app.window.current_conversation_id)[-1].id
    # Close could not finish it either: the whole text went to the recovery file.
    with Store.open(tmp_path / "conversations.sqlite3") as reopened:
        reply = reopened.get_message(reply_id)
        assert (reply.content, reply.status) == ("A reply met by a bug.", "complete")


def test_a_reply_still_refused_at_close_is_back_after_a_restart(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    story = "Kept through a full disk and a restart."
    engine = ScriptedEngine([story], chars_per_step=8, step_s=0.002)
    with running_app(qtbot, tmp_path, tmp_path / "scripted", scripted_worker(engine)) as app:
        refused = _refuse_final_writes(monkeypatch, app.controller.store)
        send_and_wait(qtbot, app, "Tell me a story")
    monkeypatch.undo()
    assert reply_recovery.recovery_path(tmp_path / "conversations.sqlite3").exists()
    engine = ScriptedEngine([])
    with running_app(qtbot, tmp_path, tmp_path / "scripted", scripted_worker(engine)) as app:
        reply = app.controller.store.get_message(refused[0])
        assert (reply.content, reply.status) == (story, "complete")
        view = app.window.chat_view.message_widget(str(reply.id))
        assert view is not None and view.body.toPlainText().strip() == story
        assert "put back into their conversations" in app.window.banner.text


@contextmanager
def _python(script: str, *args: str) -> Iterator[subprocess.Popen[str]]:
    """Run `script` in a new Python process, and kill it (SIGKILL) when the block ends."""
    with subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"},
    ) as process:
        try:
            yield process
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL


# ---- a process killed mid-reply ----------------------------------------------------------------

_STREAMER = """
import sys, time
from app.store.conversations import Store, StoreError
store = Store.open(sys.argv[1])
conversation = store.create_conversation()
question = store.append_message(conversation.id, None, "user", "count")
reply = store.begin_reply(conversation.id, question.id)
writer = store.reply_writer(reply.id)  # flushes once a second
print(reply.id, flush=True)
for i in range(100000):
    writer.append(f"w{i} ")
    print(i, flush=True)
    if sys.argv[2] == "finish-fails" and i == 150:
        def disk_full(*args, **kwargs):
            raise StoreError("disk full")
        store.finish_reply = disk_full
        try:
            writer.finish("complete")
        except StoreError:
            print("finish failed", flush=True)
        time.sleep(60)
    time.sleep(0.01)
"""


@pytest.mark.parametrize("mode", ["streaming", "finish-fails"])
def test_a_killed_process_keeps_what_was_flushed_and_nothing_is_corrupted(
    tmp_path: Path, mode: str
) -> None:
    path = tmp_path / "db.sqlite3"
    with _python(_STREAMER, str(path), mode) as process:
        assert process.stdout is not None
        reply_id = int(process.stdout.readline())
        last = -1
        for line in process.stdout:
            if line.strip() == "finish failed" or int(line) >= 250:
                break
            last = int(line)
        time.sleep(0.05)
    assert _integrity(path) == [("ok",)]
    with Store.open(path) as store:
        reply = store.get_message(reply_id)
    words = reply.content.split()
    assert reply.status == "interrupted"
    assert words == [f"w{i}" for i in range(len(words))], "a clean prefix, nothing garbled"
    # Each token takes at least 10 ms and the text is flushed once a second: at most 100
    # tokens (one second) can have been only in memory at the kill.
    assert len(words) >= last + 1 - 100


# ---- drafts --------------------------------------------------------------------------------------


def test_migration_from_the_previous_schema_adds_empty_drafts(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    with closing(sqlite3.connect(path)) as conn:  # a file as version 1 of the app left it
        conn.executescript(store_schema.MIGRATIONS[0])
        now = time.time()
        conn.execute(
            "INSERT INTO conversations (id, title, created_at, updated_at)"
            " VALUES (1, 'from version 1', ?, ?)",
            (now, now),
        )
        conn.execute(
            "INSERT INTO messages (id, conversation_id, role, content, created_at, status)"
            " VALUES (1, 1, 'user', 'old words', ?, 'complete')",
            (now,),
        )
        conn.execute("UPDATE conversations SET active_leaf_id = 1")
        conn.execute("PRAGMA user_version = 1")
        conn.commit()
    with Store.open(path) as store:
        assert store.draft(1) == ""
        store.save_draft(1, "new words, not sent yet")
        assert [m.content for m in store.active_path(1)] == ["old words"]
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (store_schema.latest_version(),)
    (backup,) = tmp_path.glob("db.sqlite3.v1-backup-*")
    with closing(sqlite3.connect(backup)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (1,)
    with Store.open(path) as store:
        assert store.draft(1) == "new words, not sent yet"


def test_a_draft_does_not_reorder_the_list_and_survives_delete_and_undo(tmp_path: Path) -> None:
    with Store.open(tmp_path / "db.sqlite3") as store:
        older = store.create_conversation("older")
        newer = store.create_conversation("newer")
        store.save_draft(older.id, "half a thought")
        assert [c.title for c in store.list_conversations()] == ["newer", "older"]
        store.delete_conversation(older.id)
        store.restore_conversation(older.id)
        assert store.draft(older.id) == "half a thought"
        assert store.draft(newer.id) == ""


def test_drafts_follow_the_conversation_and_a_restart(qtbot: Any, tmp_path: Path) -> None:
    model = tmp_path / "scripted"
    launched = start_app(qtbot, tmp_path, model, scripted_worker(ScriptedEngine([])))
    window = launched.window
    first = window.current_conversation_id
    qtbot.keyClicks(window.composer.edit, "first thought")
    window.open_conversation(launched.controller.new_conversation())
    assert window.composer.text() == ""
    qtbot.keyClicks(window.composer.edit, "second thought")
    assert first is not None
    window.open_conversation(first)
    assert window.composer.text() == "first thought"
    window.composer.edit.setPlainText("first thought, edited")
    window.close()  # saves at once, no waiting for the debounce
    relaunched = start_app(qtbot, tmp_path, model, scripted_worker(ScriptedEngine([])))
    assert relaunched.window.current_conversation_id == first
    assert relaunched.window.composer.text() == "first thought, edited"
    relaunched.window.close()


def test_a_draft_the_disk_refuses_stays_in_memory_until_it_can_be_saved(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = ScriptedEngine([])
    with running_app(qtbot, tmp_path, tmp_path / "scripted", scripted_worker(engine)) as app:
        window, store = app.window, app.controller.store
        notices: list[str] = []
        app.controller.notice.connect(notices.append)
        first = window.current_conversation_id
        assert first is not None

        def disk_full(conversation_id: int, text: str) -> None:
            raise StoreError(DISK_FULL)

        monkeypatch.setattr(store, "save_draft", disk_full)
        qtbot.keyClicks(window.composer.edit, "not on disk yet")
        window.open_conversation(app.controller.new_conversation())
        qtbot.keyClicks(window.composer.edit, "nor this")
        window.open_conversation(first)
        assert window.composer.text() == "not on disk yet"
        assert [n for n in notices if "unsent message could not be saved" in n] == [notices[0]]
        monkeypatch.undo()
    with Store.open(tmp_path / "conversations.sqlite3") as reopened:
        drafts = {c.id: reopened.draft(c.id) for c in reopened.list_conversations()}
    assert sorted(drafts.values()) == ["nor this", "not on disk yet"]


def test_a_sent_message_is_no_draft_any_more(qtbot: Any, tmp_path: Path) -> None:
    engine = ScriptedEngine(["Fine, thanks."])
    with running_app(qtbot, tmp_path, tmp_path / "scripted", scripted_worker(engine)) as app:
        cid = app.window.current_conversation_id
        assert cid is not None
        qtbot.keyClicks(app.window.composer.edit, "How are you?")
        qtbot.waitUntil(lambda: app.controller.store.draft(cid) == "How are you?", timeout=3000)
        send_and_wait(qtbot, app, "")
        assert app.controller.store.draft(cid) == ""
        assert [m.content for m in app.controller.store.active_path(cid)] == [
            "How are you?",
            "Fine, thanks.",
        ]


_TYPIST = """
import sys
from PySide6.QtCore import QTimer
from ui.main import launch, parse_args
launched = launch(parse_args(["--data-dir", sys.argv[1]]))
launched.window.composer.edit.insertPlainText("typed, never sent")
QTimer.singleShot(1500, lambda: print("waited", flush=True))
launched.app.exec()
"""


def test_a_draft_survives_a_kill(qtbot: Any, tmp_path: Path) -> None:
    with _python(_TYPIST, str(tmp_path)) as process:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "waited"
    launched = start_app(qtbot, tmp_path, None, wait_ready=False)
    assert launched.window.composer.text() == "typed, never sent"
    launched.window.close()
