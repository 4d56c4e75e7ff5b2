"""The database file: settings, migrations with backups, a newer file refused untouched, a corrupt
file set aside, and a writer killed with SIGKILL losing nothing it had committed."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from app.store import schema as store_schema
from app.store.conversations import NewerDatabaseError, Store, StoreError
from tests.paths import ROOT

REPO = ROOT


def _pragma(path: Path, name: str) -> object:
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute(f"PRAGMA {name}").fetchone()[0]


def test_new_store_uses_wal_and_the_latest_schema(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "db.sqlite3"
    with Store.open(path) as store:
        assert store.recovered_from is None
        # Per-connection settings can only be read on the store's own connection.
        db = store._db()
        assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
    assert _pragma(path, "journal_mode") == "wal"
    assert _pragma(path, "user_version") == store_schema.latest_version()
    with Store.open(path) as store:  # reopening an up-to-date file changes nothing
        assert store.list_conversations() == []
    assert sorted(p.name for p in path.parent.iterdir()) == ["db.sqlite3"]


def test_closed_store_says_so(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "db.sqlite3")
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.list_conversations()


def test_newer_database_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE future (x)")
        conn.execute("INSERT INTO future VALUES ('data from the future')")
        conn.execute("PRAGMA user_version = 99")
        conn.commit()
    before = path.read_bytes()
    with pytest.raises(NewerDatabaseError, match=r"newer version of Branchwise.*99.*unchanged"):
        Store.open(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db.sqlite3"]


def test_unusable_path_is_a_clear_error_and_nothing_is_moved(tmp_path: Path) -> None:
    folder = tmp_path / "a folder"
    (folder / "inside").mkdir(parents=True)
    with pytest.raises(StoreError, match="Could not open the conversation database"):
        Store.open(folder)
    assert [p.name for p in tmp_path.iterdir()] == ["a folder"]
    assert (folder / "inside").is_dir()


def _add_version(monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    monkeypatch.setattr(store_schema, "MIGRATIONS", (*store_schema.MIGRATIONS, script))


def test_migration_backs_up_the_file_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "db.sqlite3"
    with Store.open(path) as store:
        conversation = store.create_conversation("kept through the upgrade")
        store.append_message(conversation.id, None, "user", "hello")
    old_version = store_schema.latest_version()
    _add_version(monkeypatch, "ALTER TABLE conversations ADD COLUMN colour TEXT;")

    with Store.open(path) as store:
        assert store.get_conversation(conversation.id).title == "kept through the upgrade"
        assert [m.content for m in store.active_path(conversation.id)] == ["hello"]
    assert _pragma(path, "user_version") == old_version + 1
    (backup,) = tmp_path.glob(f"db.sqlite3.v{old_version}-backup-*")
    assert _pragma(backup, "user_version") == old_version
    with closing(sqlite3.connect(backup)) as conn:
        assert conn.execute("SELECT title FROM conversations").fetchall() == [
            ("kept through the upgrade",)
        ]


def test_failed_migration_leaves_the_old_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "db.sqlite3"
    with Store.open(path) as store:
        store.create_conversation("survivor")
    old_version = store_schema.latest_version()
    _add_version(
        monkeypatch, "ALTER TABLE conversations ADD COLUMN half TEXT; SELECT no_such_function();"
    )
    with pytest.raises(StoreError, match="no_such_function"):
        Store.open(path)
    assert _pragma(path, "user_version") == old_version
    with closing(sqlite3.connect(path)) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(conversations)")]
        assert "half" not in columns
        assert conn.execute("SELECT title FROM conversations").fetchall() == [("survivor",)]
    monkeypatch.undo()
    with Store.open(path) as store:
        assert [c.title for c in store.list_conversations()] == ["survivor"]


def test_garbage_file_is_moved_aside_and_an_empty_store_opens(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    garbage = b"this is not a database, but someone's words may be in it\n" * 200
    path.write_bytes(garbage)
    with Store.open(path) as store:
        assert store.recovered_from is not None
        assert store.recovered_from.name.startswith("db.sqlite3.corrupt-")
        assert store.recovered_from.read_bytes() == garbage
        assert store.list_conversations() == []
        store.create_conversation("fresh start")
    with Store.open(path) as store:
        assert store.recovered_from is None
        assert [c.title for c in store.list_conversations()] == ["fresh start"]


def _damage_table(path: Path, table: str) -> bytes:
    """Scribble over the root page of `table` in a database of 300 long messages."""
    with Store.open(path) as store:
        conversation = store.create_conversation()
        parent = None
        for i in range(300):
            parent = store.append_message(conversation.id, parent, "user", f"text {i} " * 40).id
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,))
    data = bytearray(path.read_bytes())
    start = (root[0] - 1) * page_size
    data[start : start + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))
    return bytes(data)


def test_damaged_conversation_list_is_detected_at_open(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    damaged = _damage_table(path, "conversations")
    with Store.open(path) as store:
        assert store.recovered_from is not None
        assert store.recovered_from.read_bytes() == damaged
        assert store.list_conversations() == []


def test_damage_elsewhere_is_a_clear_error_where_met(tmp_path: Path) -> None:
    # Only the conversation list is checked at open: a whole-file check reads every page.
    path = tmp_path / "db.sqlite3"
    _damage_table(path, "messages")
    with Store.open(path) as store:
        assert store.recovered_from is None
        (conversation,) = store.list_conversations()
        with pytest.raises(StoreError, match="could not be used: database disk image is malformed"):
            store.active_path(conversation.id)


def test_reply_left_streaming_becomes_interrupted_with_its_text(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    store = Store.open(path)
    conversation = store.create_conversation()
    question = store.append_message(conversation.id, None, "user", "write a poem")
    reply = store.begin_reply(conversation.id, question.id)
    store.update_streaming(reply.id, "Roses are red, violets")
    assert store.search("violets") == []  # a reply being written is not indexed yet
    store.close()  # as if the app had died: nobody finished the reply

    with Store.open(path) as store:
        again = store.get_message(reply.id)
        assert (again.status, again.content) == ("interrupted", "Roses are red, violets")
        assert [h.message_id for h in store.search("violets")] == [reply.id]


_CHILD = """
import json, sys
from app.store.conversations import Store

store = Store.open(sys.argv[1])
conversation = store.create_conversation("crash test")
parent = None
for turn in range(1_000_000):
    question = store.append_message(conversation.id, parent, "user", f"question {turn}")
    print(json.dumps([question.id, question.content]), flush=True)
    reply = store.begin_reply(conversation.id, question.id, "model", {"temperature": 0.5})
    text = ""
    for token in range(6):
        text += f"word{token} "
        store.update_streaming(reply.id, text)
        print(json.dumps([reply.id, text]), flush=True)
    if turn % 2:
        store.finish_reply(reply.id, text, "complete", {"tokens": 6})
        print(json.dumps([reply.id, text]), flush=True)
    parent = reply.id
"""


def _run_and_kill(path: Path, lines_before_kill: int) -> dict[int, str]:
    """Run a writer, SIGKILL it mid-stream, return the last text it reported per message."""
    reported: dict[int, str] = {}
    with subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stdout is not None and child.stderr is not None
        try:
            for _ in range(lines_before_kill):
                line = child.stdout.readline()
                assert line, child.stderr.read()
                message_id, text = json.loads(line)
                reported[message_id] = text
            os.kill(child.pid, signal.SIGKILL)
            # Whatever it printed before dying was committed first; it counts too.
            for line in child.stdout:
                if line.endswith("\n"):
                    message_id, text = json.loads(line)
                    reported[message_id] = text
        finally:
            child.kill()
    assert child.returncode == -signal.SIGKILL
    return reported


def test_sigkill_while_streaming_loses_nothing_committed(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    everything: dict[int, str] = {}
    for lines in (150, 400, 90):
        everything.update(_run_and_kill(path, lines))
        with closing(sqlite3.connect(path)) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        with Store.open(path) as store:
            assert store.recovered_from is None
            for message_id, text in everything.items():
                message = store.get_message(message_id)
                # The child may have committed one more token than it managed to report.
                assert message.content.startswith(text)
                assert message.status in {"complete", "interrupted"}
            db = store._db()
            db.execute("INSERT INTO message_search(message_search) VALUES ('integrity-check')")
    assert len(everything) > 100
