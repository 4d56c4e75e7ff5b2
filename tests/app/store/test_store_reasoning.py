"""A reply's reasoning and a message's attached files in the store: kept apart from the text,
migrated into an older file (with a backup), exported both ways, left out of search."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from app.store import schema as store_schema
from app.store.conversations import InvalidInputError, Store

NOTES = {"name": "notes.md", "size": 42, "tokens": 12, "text": "# Notes\nzanzibar ferries"}
DATA = {"name": "data.csv", "size": 20, "tokens": 9, "text": "city,pop\nParis,2.1"}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "conversations.sqlite3") as store:
        yield store


def _reasoned_reply(store: Store) -> tuple[int, int]:
    cid = store.create_conversation("Trip").id
    user = store.append_message(cid, None, "user", "Plan it", attachments=[NOTES, DATA])
    reply = store.begin_reply(cid, user.id)
    writer = store.reply_writer(reply.id)
    writer.append("", "Weighing the quokka option")
    writer.append("Take the ferry.")
    writer.finish("complete", reasoning="Weighing the quokka option.")
    return cid, reply.id


def test_reasoning_is_kept_apart_from_the_answer(store: Store) -> None:
    cid, reply_id = _reasoned_reply(store)
    reply = store.get_message(reply_id)
    assert reply.content == "Take the ferry."
    assert reply.reasoning == "Weighing the quokka option."
    user = store.active_path(cid)[0]
    assert user.content == "Plan it"
    assert user.attachments == (NOTES, DATA)


def test_search_covers_the_answer_not_the_reasoning(store: Store) -> None:
    _, reply_id = _reasoned_reply(store)
    assert [hit.message_id for hit in store.search("ferry")] == [reply_id]
    assert store.search("quokka") == []


def test_reasoning_streams_into_the_store_before_the_reply_ends(store: Store) -> None:
    cid = store.create_conversation().id
    user = store.append_message(cid, None, "user", "Hi")
    reply = store.begin_reply(cid, user.id)
    writer = store.reply_writer(reply.id, interval_s=0.0)
    writer.append("", "Thinking hard")
    assert store.get_message(reply.id).reasoning == "Thinking hard"
    assert store.get_message(reply.id).content == ""


def test_edit_and_fork_keep_the_attached_files(store: Store) -> None:
    cid, _ = _reasoned_reply(store)
    user = store.active_path(cid)[0]
    edited = store.edit_message(user.id, "Plan it again")
    assert edited.attachments == (NOTES, DATA)
    forked = store.fork_conversation(store.active_path(cid)[-1].id)
    (copy,) = store.active_path(forked.id)
    assert copy.attachments == (NOTES, DATA)


def test_json_export_round_trips_reasoning_and_attachments(store: Store) -> None:
    cid, _ = _reasoned_reply(store)
    data = store.export_json(cid)
    imported = store.import_json(data)
    user, reply = store.active_path(imported.id)
    assert user.attachments == (NOTES, DATA)
    assert (reply.content, reply.reasoning) == ("Take the ferry.", "Weighing the quokka option.")


def test_a_version_1_export_still_imports(store: Store) -> None:
    cid, _ = _reasoned_reply(store)
    data = store.export_json(cid)
    data["version"] = 1
    for message in data["messages"]:
        del message["reasoning"], message["attachments"]
    user, reply = store.active_path(store.import_json(data).id)
    assert (user.attachments, reply.reasoning) == ((), "")


def test_malformed_attachments_are_refused(store: Store) -> None:
    cid = store.create_conversation().id
    with pytest.raises(InvalidInputError, match="entry 1"):
        store.append_message(cid, None, "user", "Hi", attachments=[{"name": "x"}])
    cid2, _ = _reasoned_reply(store)
    data = store.export_json(cid2)
    data["messages"][0]["attachments"] = [{**NOTES, "size": "big"}]
    with pytest.raises(InvalidInputError, match="invalid 'size'"):
        store.import_json(data)


def test_markdown_export_folds_reasoning_and_files(store: Store) -> None:
    cid, _ = _reasoned_reply(store)
    text = store.export_markdown(cid)
    assert "<summary>Attached: notes.md (42 B)</summary>" in text
    assert "```\n# Notes\nzanzibar ferries\n```" in text
    thinking = text.index("<summary>Thinking</summary>")
    assert "> Weighing the quokka option." in text[thinking:]
    # Reasoning comes first, folded; the answer follows outside the fold.
    assert text.index("</details>", thinking) < text.index("Take the ferry.")


def test_a_version_1_file_is_migrated_with_a_backup(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript(store_schema.MIGRATIONS[0])
        now = time.time()
        conn.execute(
            "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (1, 'Old', ?, ?)",
            (now, now),
        )
        conn.execute(
            "INSERT INTO messages (id, conversation_id, role, content, created_at, status)"
            " VALUES (1, 1, 'user', 'walrus question', ?, 'complete')",
            (now,),
        )
        conn.execute(
            "INSERT INTO messages (id, conversation_id, parent_id, role, content, created_at,"
            " status) VALUES (2, 1, 1, 'assistant', 'walrus answer', ?, 'complete')",
            (now,),
        )
        conn.execute("UPDATE conversations SET active_leaf_id = 2")
        conn.execute("PRAGMA user_version = 1")
        conn.commit()
    with Store.open(path) as store:
        user, reply = store.active_path(1)
        assert (user.content, user.attachments) == ("walrus question", ())
        assert (reply.content, reply.reasoning) == ("walrus answer", "")
        assert {hit.message_id for hit in store.search("walrus")} == {1, 2}
    (backup,) = tmp_path.glob("db.sqlite3.v1-backup-*")
    with closing(sqlite3.connect(backup)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 2
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == store_schema.latest_version()
