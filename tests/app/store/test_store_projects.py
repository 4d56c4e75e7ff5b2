"""Projects and presets in the store: the instructions every chat of a project starts with (the
same bytes in each, versioned, recorded by the replies that read them), moving chats, deleting a
project with or without its chats and undoing it, search narrowed to a project, presets' unique
names, and an older database migrated with its chats intact."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.store import schema
from app.store.conversations import InvalidInputError, Store
from app.store.project_records import ProjectFields, with_instructions

LONG = "You are the research team's assistant. Cite sources. " * 20


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "conversations.sqlite3") as store:
        yield store


def test_every_chat_of_a_project_starts_with_the_same_instructions(store: Store) -> None:
    project = store.create_project(ProjectFields("Research", LONG))
    plain = store.create_conversation(project_id=project.id)
    own = store.create_conversation(project_id=project.id, system_prompt="Answer in French.")
    loose = store.create_conversation(system_prompt="Answer in French.")

    assert store.system_prompt_for(plain.id) == LONG
    assert store.system_prompt_for(own.id) == LONG + "\n\nAnswer in French."
    assert store.system_prompt_for(loose.id) == "Answer in French."
    # Whitespace-only instructions add nothing (not even the separator).
    assert with_instructions("  \n", "Hi") == "Hi"


def test_edited_instructions_are_a_new_version_and_replies_record_theirs(store: Store) -> None:
    project = store.create_project(ProjectFields("Research", "Version one."))
    chat = store.create_conversation(project_id=project.id)
    question = store.append_message(chat.id, None, "user", "Hello")
    first = store.begin_reply(chat.id, question.id)
    store.update_project(project.id, ProjectFields("Research", "Version two."))
    # The reply began with version 1: that is what it records, though version 2 exists now.
    first = store.finish_reply(first.id, "Hi", provenance={"token_ids": [1, 2]})
    assert first.provenance["instructions"]["version"] == 1

    second = store.begin_reply(chat.id, question.id)
    second = store.finish_reply(second.id, "Hello", provenance={"token_ids": [3]})
    assert second.provenance["instructions"]["version"] == 2
    assert first.provenance["instructions"]["digest"] != second.provenance["instructions"]["digest"]
    # The old text is kept: a replay of the first reply reads what it was asked with.
    assert store.system_prompt_for(chat.id, version=1) == "Version one."
    assert store.system_prompt_for(chat.id) == "Version two."
    assert [v for v, _text, _at in store.instruction_versions(project.id)] == [1, 2]
    # A reply without provenance (a remote server's) records none.
    third = store.begin_reply(chat.id, question.id)
    assert store.finish_reply(third.id, "Hey").provenance == {}


def test_moving_chats_and_searching_inside_a_project(store: Store) -> None:
    project = store.create_project(ProjectFields("Garden"))
    inside = store.create_conversation("Tomatoes")
    outside = store.create_conversation("Cooking")
    for chat in (inside, outside):
        store.append_message(chat.id, None, "user", "When do I plant tomatoes?")
    store.move_to_project(inside.id, project.id)

    assert {h.conversation_id for h in store.search("tomatoes")} == {inside.id, outside.id}
    narrowed = store.search("tomatoes", project_id=project.id)
    assert narrowed and {h.conversation_id for h in narrowed} == {inside.id}
    store.move_to_project(inside.id, None)
    assert store.search("tomatoes", project_id=project.id) == []


@pytest.mark.parametrize("delete_chats", [False, True])
def test_deleting_a_project_keeps_or_deletes_its_chats_and_undo_restores_both(
    store: Store, delete_chats: bool
) -> None:
    project = store.create_project(ProjectFields("Trip", "Plan trips."))
    chats = [store.create_conversation(f"Day {n}", project_id=project.id).id for n in (1, 2)]
    loose = store.create_conversation("Loose").id

    deletion = store.delete_project(project.id, delete_chats=delete_chats)
    assert store.list_projects() == []
    listed = {c.id for c in store.list_conversations()}
    if delete_chats:
        assert listed == {loose}
    else:  # moved out, loose now, reading no instructions
        assert listed == {loose, *chats}
        assert all(store.get_conversation(c).project_id is None for c in chats)
        assert store.system_prompt_for(chats[0]) == ""

    store.restore_project(deletion)
    assert [p.id for p in store.list_projects()] == [project.id]
    assert {c.id for c in store.list_conversations() if c.project_id == project.id} == set(chats)

    store.delete_project(project.id, delete_chats=delete_chats)
    store.purge_deleted()
    assert store.project_by_uid(project.uid) is None
    assert len(store.list_conversations()) == (1 if delete_chats else 3)


def test_preset_names_are_unique_whatever_their_case(store: Store) -> None:
    coding = store.create_preset("Coding", {"params": {"temperature": 0.2}})
    with pytest.raises(InvalidInputError, match="already a preset"):
        store.create_preset("coding", {})
    copy = store.duplicate_preset(coding.id)
    assert (copy.name, copy.settings) == ("Coding copy", coding.settings)
    assert store.preset_named("CODING") == coding
    chat = store.create_conversation(preset_id=coding.id)
    store.delete_preset(coding.id)
    assert store.get_conversation(chat.id).preset_id is None  # the chat keeps its settings


def test_an_older_database_migrates_with_its_chats(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:
        for step in schema.MIGRATIONS[:-1]:  # the schema before projects and presets
            if isinstance(step, str):
                conn.executescript(step)
            else:
                step(conn)
        conn.execute(f"PRAGMA user_version = {len(schema.MIGRATIONS) - 1}")
        conn.execute(
            "INSERT INTO conversations (title, created_at, updated_at) VALUES ('Old', 1, 1)"
        )
    conn.close()
    with Store.open(path) as store:
        (old,) = store.list_conversations()
        assert (old.title, old.project_id, old.preset_id) == ("Old", None, None)
        project = store.create_project(ProjectFields("New"))
        store.move_to_project(old.id, project.id)
        assert store.get_conversation(old.id).project_id == project.id
