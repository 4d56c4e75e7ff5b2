"""Compacted branches in the store (issue 47): a summary beside the full chat, its kept turns,
an edit, an abandoned one; carried by the export, the archive and Markdown; an older database
migrated; a process killed while a summary streams leaves the full chat as it was."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from app.importers import run
from app.store.compaction_records import copy_of, covered_ids, kept_ids, stands_for
from app.store.conversations import Store
from app.store.records import InvalidInputError, Message
from app.store.table_rebuild import rebuild_table
from tests.test_faults_text import _integrity, _python

TURNS = [("Plan a trip to Porto", "Three days: Ribeira, Livraria Lello, the Douro."),
         ("And the food?", "Francesinha and pastéis de nata."),
         ("Which month?", "May or September.")]  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(tmp_path / "chat.sqlite3")


def _chat(store: Store) -> tuple[int, list[Message]]:
    cid = store.create_conversation("Porto", system_prompt="Be brief.").id
    parent = None
    for question, answer in TURNS:
        parent = store.append_message(cid, parent, "user", question).id
        parent = store.append_message(cid, parent, "assistant", answer).id
    return cid, store.active_path(cid)


def _compacted(store: Store, cid: int, full: list[Message]) -> Message:
    """The first two turns summarised, the last kept: a written summary and its copies."""
    record = {"covers": [m.id for m in full[:4]], "kept": [m.id for m in full[4:]]}
    summary = store.begin_summary(cid, {**record, "through": full[-1].id}, "llama", {})
    writer = store.reply_writer(summary.id)
    writer.append("- A three-day trip to Porto; food: francesinha, nata.")
    writer.finish("complete", stats={"generated_tokens": 12})
    store.set_compaction(summary.id, {**summary.compaction, "stands_for": 57})
    return store.keep_turns(summary.id)


def test_a_compacted_branch_is_a_root_beside_the_full_chat(store: Store) -> None:
    cid, full = _chat(store)
    leaf = _compacted(store, cid, full)
    branch = store.active_path(cid)
    assert leaf.id == branch[-1].id
    assert [m.role for m in branch] == ["summary", "user", "assistant"]
    assert [m.content for m in branch[1:]] == [m.content for m in full[4:]]
    assert [copy_of(m) for m in branch[1:]] == [m.id for m in full[4:]]
    assert all(m.stats == {} and m.provenance == {} for m in branch[1:])
    siblings, index = store.siblings(branch[0].id)
    assert ([m.id for m in siblings], index) == ([full[0].id, branch[0].id], 1)
    assert store.path_to(full[-1].id) == full  # the full chat, untouched

    # An edit is a sibling summary with the same kept turns below it.
    edited = store.active_path(store.edit_summary(branch[0].id, "My own summary.").conversation_id)
    assert [m.content for m in edited] == ["My own summary.", *[m.content for m in full[4:]]]
    assert edited[0].compaction["edited"] is True and covered_ids(edited[0]) == covered_ids(
        branch[0]
    )
    assert len(store.siblings(edited[0].id)[0]) == 3

    # Abandoned: gone with what was below it, and the branch named shown again.
    store.abandon_summary(edited[0].id, full[-1].id)
    assert store.active_path(cid) == full
    assert len(store.siblings(full[0].id)[0]) == 2


def test_a_summary_names_messages_of_its_own_conversation(store: Store) -> None:
    cid, full = _chat(store)
    other = store.create_conversation("Other").id
    with pytest.raises(InvalidInputError, match="belongs to another conversation"):
        store.begin_summary(other, {"covers": [full[0].id], "kept": []})
    with pytest.raises(InvalidInputError, match="needs the messages it summarises"):
        store.begin_summary(cid, {"covers": [], "kept": []})
    with pytest.raises(InvalidInputError, match="'kept' must be a list of message ids"):
        store.begin_summary(cid, {"covers": [full[0].id], "kept": ["x"]})


def test_export_archive_and_markdown_carry_the_summary(store: Store, tmp_path: Path) -> None:
    cid, full = _chat(store)
    _compacted(store, cid, full)
    data = store.export_json(cid)
    assert data["version"] == 6
    exported = next(m for m in data["messages"] if m["role"] == "summary")
    assert exported["compaction"]["covers"] == [m.id for m in full[:4]]

    copy = store.import_json(data)
    archive = tmp_path / "archive.json"
    archive.write_text(
        json.dumps({"format": "branchwise-archive", "conversations": [data]}), "utf-8"
    )
    with Store.open(tmp_path / "restored.sqlite3") as restored:
        report = run.import_paths([archive], restored)
        rid = report.inputs[0].outcomes[0].conversation_id
        assert rid is not None
        for target, conversation_id in ((store, copy.id), (restored, rid)):
            branch = target.active_path(conversation_id)
            summary = branch[0]
            covered = [target.get_message(i) for i in covered_ids(summary)]
            # The ids are the new database's, naming the same messages.
            assert [m.content for m in covered] == [m.content for m in full[:4]]
            assert all(m.conversation_id == conversation_id for m in covered)
            assert [copy_of(m) for m in branch[1:]] == kept_ids(summary)
            assert stands_for(summary) == 57

    markdown = store.export_markdown(cid)
    assert "## Summary of the earlier conversation" in markdown
    assert "summary of 4 earlier messages, about 57 tokens" in markdown
    assert markdown.index("francesinha, nata") < markdown.index("Which month?")
    assert "Plan a trip to Porto" not in markdown  # the compacted path, as it reads now


def test_an_older_database_takes_summaries_after_migrating(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with Store.open(path) as store:
        cid, full = _chat(store)
    with sqlite3.connect(path) as conn:
        without_summaries(conn)
        conn.execute("PRAGMA user_version = 6")
    with Store.open(path) as store:
        assert store.active_path(cid) == full
        _compacted(store, cid, full)
        assert store.active_path(cid)[0].role == "summary"
    assert list(tmp_path.glob("*v6-backup*"))


def without_summaries(conn: sqlite3.Connection) -> None:
    """A database back as schema 6 left it: no `summary` role, no `compaction` column."""
    conn.execute("ALTER TABLE messages DROP COLUMN compaction")
    rebuild_table(
        conn,
        "messages",
        "CHECK (role IN ('user', 'assistant', 'tool', 'summary'))",
        "CHECK (role IN ('user', 'assistant', 'tool'))",
    )


_SUMMARISING = """
import sys, time
from app.store.conversations import Store
store = Store.open(sys.argv[1])
cid = store.list_conversations()[0].id
full = store.active_path(cid)
summary = store.begin_summary(cid, {"covers": [m.id for m in full], "kept": []})
writer = store.reply_writer(summary.id)  # flushes once a second
print(summary.id, flush=True)
for i in range(100000):
    writer.append(f"point {i}. ")
    print(i, flush=True)
    time.sleep(0.01)
"""


def test_a_process_killed_while_a_summary_streams_leaves_the_full_chat_intact(
    tmp_path: Path,
) -> None:
    path = tmp_path / "chat.sqlite3"
    with Store.open(path) as store:
        cid, full = _chat(store)
    with _python(_SUMMARISING, str(path)) as process:
        assert process.stdout is not None
        summary_id = int(process.stdout.readline())
        for line in process.stdout:
            if int(line) >= 150:
                break
        time.sleep(0.05)
    assert _integrity(path) == [("ok",)]
    with Store.open(path) as store:
        assert store.path_to(full[-1].id) == full
        summary = store.get_message(summary_id)
        assert summary.status == "interrupted" and summary.content.startswith("point 0. ")
        assert store.children(summary_id) == []
        # One click back: the full chat is the first root, where it was.
        store.switch_to_sibling(full[0].id)
        assert store.active_path(cid) == full
