"""Tool use in the store: a version-3 file upgraded keeps every message and branch, tool
messages round-trip through the file and the export, and editing a call or a result makes a
sibling."""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest

from app.store import schema as store_schema
from app.store.conversations import Store
from app.store.records import InvalidInputError

_CALL = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Oslo"}}


def _version_3_file(path: Path) -> None:
    """A file as Branchwise wrote it at schema 3: a branched chat with reasoning and a file."""
    with closing(sqlite3.connect(path)) as conn:
        for script in store_schema.MIGRATIONS[:3]:
            assert isinstance(script, str)
            conn.executescript(script)
        now = time.time()
        conn.execute(
            "INSERT INTO conversations (id, title, created_at, updated_at, draft)"
            " VALUES (1, 'Walruses', ?, ?, 'half typed')",
            (now, now),
        )
        rows = [
            (1, None, "user", "walrus question", "", "[]"),
            (2, 1, "assistant", "walrus answer", "thinking of tusks", "[]"),
            (3, 1, "assistant", "second walrus answer", "", "[]"),
            (
                4,
                3,
                "user",
                "follow-up",
                "",
                '[{"name": "a.txt", "size": 1, "tokens": 1, "text": "x"}]',
            ),
        ]
        for mid, parent, role, content, reasoning, attachments in rows:
            conn.execute(
                "INSERT INTO messages (id, conversation_id, parent_id, role, content, created_at,"
                " status, reasoning, attachments, visit) VALUES (?, 1, ?, ?, ?, ?, 'complete',"
                " ?, ?, ?)",
                (mid, parent, role, content, now, reasoning, attachments, mid),
            )
        conn.execute("UPDATE conversations SET active_leaf_id = 4, visit_clock = 4")
        conn.execute("PRAGMA user_version = 3")
        conn.commit()


def test_a_version_3_file_keeps_every_message_and_branch(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    _version_3_file(path)
    with Store.open(path) as store:
        assert [m.id for m in store.active_path(1)] == [1, 3, 4]
        siblings, index = store.siblings(3)
        assert ([m.id for m in siblings], index) == ([2, 3], 1)
        assert store.get_message(2).reasoning == "thinking of tusks"
        assert store.get_message(4).attachments[0]["name"] == "a.txt"
        assert store.draft(1) == "half typed"
        assert {hit.message_id for hit in store.search("walrus")} == {None, 1, 2, 3}
        # Going back to the first answer lands on it; the ids go on after the old ones.
        assert store.switch_to_sibling(2).id == 2
        new = store.append_message(1, 2, "user", "another walrus")
        assert new.id == 5
        # The rebuilt table still refuses what it refused, and now takes tool messages.
        with pytest.raises(InvalidInputError):
            store.append_message(1, 2, "system", "no such role")  # type: ignore[arg-type]
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == store_schema.latest_version()
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        indexes = {
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_schema WHERE tbl_name = 'messages' AND type = 'index'"
                " AND sql IS NOT NULL"
            )
        }
        assert {
            "messages_by_parent",
            "messages_by_conversation",
            "messages_streaming",
            "messages_by_source",
            "messages_by_batch",
        } <= indexes  # a later step's too
        # The rebuilt table still links each message to its parent.
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute(
                "INSERT INTO messages (conversation_id, parent_id, role, content, created_at,"
                " status) VALUES (1, 999, 'tool', 'x', 0, 'complete')"
            )
    assert list(tmp_path.glob("db.sqlite3.v3-backup-*"))


def test_the_open_store_checks_foreign_keys(tmp_path: Path) -> None:
    with Store.open(tmp_path / "db.sqlite3") as store:
        conversation = store.create_conversation("c")
        with pytest.raises(Exception, match="FOREIGN KEY"):
            store._db().execute(
                "INSERT INTO messages (conversation_id, parent_id, role, content, created_at,"
                " status) VALUES (?, 999, 'user', 'x', 0, 'complete')",
                (conversation.id,),
            )


def _chat_with_a_call(store: Store) -> tuple[int, int]:
    conversation = store.create_conversation("weather")
    user = store.append_message(conversation.id, None, "user", "Weather in Oslo?")
    reply = store.begin_reply(conversation.id, user.id, "tiny")
    store.finish_reply(reply.id, "", tool_calls=[_CALL])
    return conversation.id, reply.id


def test_tool_messages_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    with Store.open(path) as store:
        conversation_id, reply_id = _chat_with_a_call(store)
        stats = {
            "server": "weather",
            "tool": "get_weather",
            "duration_s": 0.25,
            "chars": 9,
            "cut": 0,
        }
        result = store.add_tool_result(
            reply_id, "call_1", "weather__get_weather", "Sunny, 4C", stats=stats
        )
        store.append_message(conversation_id, result.id, "assistant", "It is sunny.")
    with Store.open(path) as store:
        _, reply, tool, answer = store.active_path(conversation_id)
        assert reply.tool_calls == (_CALL,)
        assert (tool.role, tool.tool_call_id, tool.tool_name) == (
            "tool",
            "call_1",
            "weather__get_weather",
        )
        assert tool.stats == stats and tool.content == "Sunny, 4C"
        assert answer.content == "It is sunny."
        assert {hit.message_id for hit in store.search("sunny")} >= {tool.id}
        exported = store.export_json(conversation_id)
        copy = store.import_json(exported)
        _, reply2, tool2, _ = store.active_path(copy.id)
        assert reply2.tool_calls == (_CALL,)
        assert (tool2.role, tool2.tool_call_id, tool2.stats) == ("tool", "call_1", stats)
        markdown = store.export_markdown(conversation_id)
        assert "<summary>Tool call: get_weather</summary>" in markdown
        assert '"city": "Oslo"' in markdown
        assert "<summary>Tool result: weather__get_weather</summary>" in markdown


def test_an_older_export_reads_without_tool_fields(tmp_path: Path) -> None:
    with Store.open(tmp_path / "db.sqlite3") as store:
        conversation_id, _ = _chat_with_a_call(store)
        data = store.export_json(conversation_id)
        assert data["version"] == 6  # version 5 added provenance, 6 summaries
        data["version"] = 2
        for message in data["messages"]:
            for key in ("tool_calls", "tool_call_id", "tool_name"):
                del message[key]
        copy = store.import_json(data)
        assert all(m.tool_calls == () for m in store.active_path(copy.id))


def test_an_export_with_bad_calls_is_refused(tmp_path: Path) -> None:
    with Store.open(tmp_path / "db.sqlite3") as store:
        conversation_id, _ = _chat_with_a_call(store)
        data = store.export_json(conversation_id)
        data["messages"][1]["tool_calls"] = [{"id": "x", "name": "f", "arguments": "not json"}]
        with pytest.raises(InvalidInputError, match="messages\\[1\\]"):
            store.import_json(data)


def test_a_result_must_answer_a_call_of_its_reply(tmp_path: Path) -> None:
    with Store.open(tmp_path / "db.sqlite3") as store:
        _, reply_id = _chat_with_a_call(store)
        with pytest.raises(InvalidInputError, match="no tool call with id 'nope'"):
            store.add_tool_result(reply_id, "nope", "get_weather", "x")


def test_editing_arguments_or_a_result_makes_a_sibling(tmp_path: Path) -> None:
    with Store.open(tmp_path / "db.sqlite3") as store:
        conversation_id, reply_id = _chat_with_a_call(store)
        result = store.add_tool_result(
            reply_id, "call_1", "get_weather", "Sunny", stats={"server": "w", "tool": "get_weather"}
        )
        edited_result = store.edit_message(result.id, "Snowing")
        assert edited_result.parent_id == reply_id and edited_result.role == "tool"
        assert edited_result.tool_call_id == "call_1" and edited_result.stats["edited"] is True
        assert [m.content for m in store.siblings(result.id)[0]] == ["Sunny", "Snowing"]
        # An empty result is a result too (a tool may answer nothing).
        assert store.edit_message(result.id, "").content == ""

        bergen = [{**_CALL, "arguments": {"city": "Bergen"}}]
        edited_reply = store.edit_tool_calls(reply_id, bergen)
        siblings, index = store.siblings(edited_reply.id)
        assert [m.id for m in siblings] == [reply_id, edited_reply.id] and index == 1
        assert edited_reply.tool_calls[0]["arguments"] == {"city": "Bergen"}
        assert store.get_message(reply_id).tool_calls == (_CALL,)
        assert store.active_path(conversation_id)[-1].id == edited_reply.id
        # Going back to the original finds the result where it was: nothing runs again.
        assert store.switch_to_sibling(reply_id).parent_id == reply_id
