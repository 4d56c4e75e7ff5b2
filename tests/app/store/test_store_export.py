"""Export as JSON (whole tree, lossless, re-importable, also into a fresh database) and as
Markdown (the active path); malformed imports are refused without writing anything."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.store.conversations import Conversation, InvalidInputError, Store
from app.store.export import EXPORT_VERSION


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "conversations.sqlite3") as store:
        yield store


def _branchy(store: Store) -> Conversation:
    """q -> (a1 -> q2 -> a2, a1' stopped), q-edit -> a-err; active on the a1 branch."""
    conversation = store.create_conversation(
        "Branchy", system_prompt="Be kind.\nBe brief.", model_id="m1", params={"temperature": 0.3}
    )
    q = store.append_message(conversation.id, None, "user", "q")
    a1 = store.begin_reply(conversation.id, q.id, "m1", {"temperature": 0.3})
    store.finish_reply(a1.id, "a1", "complete", stats={"prompt_tokens": 5, "decode_tps": 31.5})
    q2 = store.append_message(conversation.id, a1.id, "user", "q2")
    a2 = store.begin_reply(conversation.id, q2.id, "m1")
    store.finish_reply(a2.id, "a2", "complete")
    a1b = store.begin_reply(conversation.id, q.id, "m2")
    store.finish_reply(a1b.id, "a1 again", "stopped")
    q_edit = store.edit_message(q.id, "q edited")
    err = store.begin_reply(conversation.id, q_edit.id)
    store.finish_reply(err.id, "", "error", error="out of memory")
    store.switch_to_sibling(q.id)
    store.switch_to_sibling(a1.id)
    store.set_pinned(conversation.id, True)
    return store.get_conversation(conversation.id)


def _shape(store: Store, conversation_id: int) -> list[tuple[Any, ...]]:
    """Everything about a tree except its ids, with parents named by their position."""
    messages = store.all_messages(conversation_id)
    position = {m.id: i for i, m in enumerate(messages)}
    return [
        (
            None if m.parent_id is None else position[m.parent_id],
            m.role,
            m.content,
            m.created_at,
            m.status,
            m.model_id,
            m.params,
            m.stats,
            m.error,
        )
        for m in messages
    ]


def _settings(c: Conversation) -> tuple[Any, ...]:
    return (c.title, c.created_at, c.updated_at, c.system_prompt, c.model_id, c.params,
            c.pinned, c.archived)  # fmt: skip


def test_json_round_trip_into_a_fresh_database_is_lossless(store: Store, tmp_path: Path) -> None:
    original = _branchy(store)
    text = json.dumps(store.export_json(original.id))  # what a file on disk would hold
    with Store.open(tmp_path / "fresh.sqlite3") as fresh:
        imported = fresh.import_json(json.loads(text))
        assert _settings(imported) == _settings(original)
        assert _shape(fresh, imported.id) == _shape(store, original.id)
        assert [m.content for m in fresh.active_path(imported.id)] == ["q", "a1", "q2", "a2"]
        # Visit order survives: the other branches resume where they were left.
        (q_new, q_edit_new), _ = fresh.siblings(fresh.active_path(imported.id)[0].id)
        assert fresh.switch_to_sibling(q_edit_new.id).error == "out of memory"
        assert fresh.switch_to_sibling(q_new.id).content == "a2"
        assert [h.snippet for h in fresh.search("again")] == ["a1 again"]


def test_import_into_the_same_database_gets_new_ids(store: Store) -> None:
    original = _branchy(store)
    imported = store.import_json(store.export_json(original.id))
    assert imported.id != original.id
    old_ids = {m.id for m in store.all_messages(original.id)}
    assert old_ids.isdisjoint(m.id for m in store.all_messages(imported.id))
    assert _shape(store, imported.id) == _shape(store, original.id)
    assert len(store.list_conversations()) == 2


def test_streaming_reply_is_imported_as_interrupted(store: Store) -> None:
    conversation = store.create_conversation("x")
    q = store.append_message(conversation.id, None, "user", "q")
    reply = store.begin_reply(conversation.id, q.id)
    store.update_streaming(reply.id, "half a rep")
    exported = store.export_json(conversation.id)
    assert exported["messages"][1]["status"] == "streaming"
    imported = store.import_json(exported)
    last = store.active_path(imported.id)[-1]
    assert (last.content, last.status) == ("half a rep", "interrupted")


def test_empty_conversation_round_trips(store: Store) -> None:
    conversation = store.create_conversation("empty")
    imported = store.import_json(store.export_json(conversation.id))
    assert imported.active_leaf_id is None and store.active_path(imported.id) == []


def test_markdown_holds_the_active_path(store: Store) -> None:
    conversation = _branchy(store)
    conversation = store.get_conversation(conversation.id)
    started, changed = (
        time.strftime("%Y-%m-%d %H:%M", time.localtime(t))
        for t in (conversation.created_at, conversation.updated_at)
    )
    assert store.export_markdown(conversation.id, {"m1": "Model One"}) == (
        f"# Branchy\n\n*Started {started}, last changed {changed}.*\n\n"
        "**System prompt**\n\n> Be kind.\n> Be brief.\n\n"
        "## User\n\nq\n\n## Assistant (Model One)\n\na1\n\n## User\n\nq2\n\n"
        "## Assistant (Model One)\n\na2\n"
    )
    assert "## Assistant (m1)" in store.export_markdown(conversation.id)  # no name known
    q_edit = store.siblings(store.active_path(conversation.id)[0].id)[0][1]
    store.switch_to_sibling(q_edit.id)
    assert store.export_markdown(conversation.id).endswith(
        "## User\n\nq edited\n\n## Assistant\n\n*(failed)*\n\n*Error: out of memory*\n"
    )


def _bad(data: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    broken = copy.deepcopy(data)
    target: Any = broken
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return broken


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["format"], "something-else", "not a Branchwise conversation export"),
        (["version"], EXPORT_VERSION + 1, "newer Branchwise"),
        (["version"], "1", "invalid version"),
        (["messages"], KeyError, '"messages" must be a list'),
        (["conversation"], [], "must be a JSON object"),
        (["conversation", "title"], "  ", "title is empty"),
        (["conversation", "created_at"], "yesterday", "created_at must be a time"),
        (["conversation", "pinned"], 1, "pinned must be true or false"),
        (["conversation", "params"], [1, 2], "params must be a mapping"),
        (["conversation", "active_leaf_id"], 12345, "names no message"),
        (["messages", 1, "parent_id"], 12345, "names no earlier message"),
        (["messages", 0, "parent_id"], True, "names no earlier message"),
        (["messages", 1, "id"], "two", "must be a whole number"),
        (["messages", 1, "role"], "system", r"messages\[1\]: Unknown role"),
        (["messages", 1, "status"], "done", r"messages\[1\]: Unknown status"),
        (["messages", 1, "content"], None, "content must be text"),
        (["messages", 1, "content"], "bad \ud800", "unpaired surrogate"),
        (["messages", 1, "stats"], {"tps": float("inf")}, "stats cannot be saved"),
        (["messages", 1, "visit"], -1, "visit must be a whole number"),
        (["messages", 1], "not an object", r"messages\[1\] must be a JSON object"),
    ],
)
def test_malformed_import_is_refused_and_writes_nothing(
    store: Store, path: list[Any], value: Any, message: str
) -> None:
    conversation = store.create_conversation("source")
    q = store.append_message(conversation.id, None, "user", "q")
    store.append_message(conversation.id, q.id, "assistant", "a")
    broken = _bad(store.export_json(conversation.id), path, value)
    with pytest.raises(InvalidInputError, match=message):
        store.import_json(broken)
    assert [c.id for c in store.list_conversations(include_archived=True)] == [conversation.id]


def test_duplicate_ids_and_non_objects_are_refused(store: Store) -> None:
    conversation = store.create_conversation("source")
    store.append_message(conversation.id, None, "user", "q")
    data = store.export_json(conversation.id)
    data["messages"].append(dict(data["messages"][0]))
    with pytest.raises(InvalidInputError, match="appears twice"):
        store.import_json(data)
    for junk in (None, [], "text", 42):
        with pytest.raises(InvalidInputError, match="must be a JSON object"):
            store.import_json(junk)
    assert len(store.list_conversations()) == 1


def test_messages_come_parents_first(store: Store) -> None:
    conversation = _branchy(store)
    data = store.export_json(conversation.id)
    seen: set[int] = set()
    for record in data["messages"]:
        assert record["parent_id"] is None or record["parent_id"] in seen
        seen.add(record["id"])
    assert {m.id for m in store.all_messages(conversation.id)} == seen


def test_active_leaf_from_a_hand_edited_file_is_resolved_to_a_leaf(store: Store) -> None:
    conversation = _branchy(store)
    data = store.export_json(conversation.id)
    q_edit = next(m for m in data["messages"] if m["content"] == "q edited")
    data["conversation"]["active_leaf_id"] = q_edit["id"]  # an inner message
    imported = store.import_json(data)
    assert [m.content for m in store.active_path(imported.id)] == ["q edited", ""]
    data["conversation"]["active_leaf_id"] = None  # the leaf visited last overall
    imported = store.import_json(data)
    assert [m.content for m in store.active_path(imported.id)] == ["q", "a1", "q2", "a2"]
