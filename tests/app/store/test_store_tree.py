"""Conversations and their message trees: every operation of issue 5 item 2, as the UI uses it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.store.conversations import Conversation, InvalidInputError, Message, NotFoundError, Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "conversations.sqlite3") as store:
        yield store


def _contents(store: Store, conversation: Conversation) -> list[str]:
    return [m.content for m in store.active_path(conversation.id)]


def _chat(store: Store, *turns: str) -> tuple[Conversation, list[Message]]:
    """A conversation whose active path is `turns`, alternating user and assistant."""
    conversation = store.create_conversation("Chat")
    messages: list[Message] = []
    for i, text in enumerate(turns):
        parent = messages[-1].id if messages else None
        messages.append(
            store.append_message(conversation.id, parent, ("user", "assistant")[i % 2], text)
        )
    return store.get_conversation(conversation.id), messages


# --- conversations --------------------------------------------------------------------------


def test_create_conversation_with_settings(store: Store) -> None:
    conversation = store.create_conversation(
        "Trip", system_prompt="Be brief.", model_id="smollm2", params={"temperature": 0.2}
    )
    again = store.get_conversation(conversation.id)
    assert again == conversation
    assert (again.title, again.system_prompt, again.model_id) == ("Trip", "Be brief.", "smollm2")
    assert again.params == {"temperature": 0.2}
    assert again.active_leaf_id is None
    assert not again.pinned and not again.archived
    assert store.active_path(conversation.id) == []
    assert store.create_conversation().title == "New conversation"


def test_rename_pin_archive_and_list_order(store: Store) -> None:
    first = store.create_conversation("first")
    second = store.create_conversation("second")
    third = store.create_conversation("third")
    store.append_message(first.id, None, "user", "bump first")  # most recently updated now
    assert [c.title for c in store.list_conversations()] == ["first", "third", "second"]

    store.set_pinned(second.id, True)
    assert [c.title for c in store.list_conversations()] == ["second", "first", "third"]

    assert store.rename(third.id, "renamed").title == "renamed"
    store.set_archived(first.id, True)
    assert [c.title for c in store.list_conversations()] == ["second", "renamed"]
    assert [c.title for c in store.list_conversations(include_archived=True)] == [
        "second",
        "first",
        "renamed",
    ]
    store.set_pinned(second.id, False)
    store.set_archived(first.id, False)
    assert store.get_conversation(second.id).pinned is False
    assert store.get_conversation(first.id).archived is False


def test_rename_refuses_an_empty_title(store: Store) -> None:
    conversation = store.create_conversation("keep me")
    with pytest.raises(InvalidInputError, match="empty"):
        store.rename(conversation.id, "  \n")
    assert store.get_conversation(conversation.id).title == "keep me"


def test_update_settings_changes_only_what_is_given(store: Store) -> None:
    conversation = store.create_conversation(model_id="a", params={"top_p": 0.9})
    updated = store.update_settings(conversation.id, system_prompt="You are terse.")
    assert (updated.system_prompt, updated.model_id, updated.params) == (
        "You are terse.",
        "a",
        {"top_p": 0.9},
    )
    updated = store.update_settings(conversation.id, model_id=None, params={"temperature": 0})
    assert (updated.system_prompt, updated.model_id, updated.params) == (
        "You are terse.",
        None,
        {"temperature": 0},
    )
    with pytest.raises(InvalidInputError, match="sampling parameters"):
        store.update_settings(conversation.id, params={"seed": float("nan")})
    assert store.get_conversation(conversation.id).params == {"temperature": 0}


def test_delete_conversation_can_be_undone_until_purged(store: Store) -> None:
    conversation, messages = _chat(store, "remember the milk", "noted")
    store.delete_conversation(conversation.id)
    assert store.list_conversations(include_archived=True) == []
    assert store.search("milk") == []
    with pytest.raises(NotFoundError):
        store.get_conversation(conversation.id)

    restored = store.restore_conversation(conversation.id)
    assert restored == conversation
    assert _contents(store, restored) == ["remember the milk", "noted"]
    assert [h.message_id for h in store.search("milk")] == [messages[0].id]

    store.delete_conversation(conversation.id)
    assert store.purge_deleted(older_than_s=3600) == 0  # deleted just now: still undoable
    assert store.purge_deleted() == 1
    with pytest.raises(NotFoundError):
        store.restore_conversation(conversation.id)
    with pytest.raises(NotFoundError):
        store.get_message(messages[0].id)
    store.create_conversation("another")
    assert [c.title for c in store.list_conversations()] == ["another"]


def test_fork_copies_the_path_into_a_new_conversation(store: Store) -> None:
    conversation, messages = _chat(store, "q1", "a1", "q2", "a2")
    store.update_settings(conversation.id, system_prompt="sys", model_id="m", params={"k": 1})
    fork = store.fork_conversation(messages[2].id)
    assert fork.id != conversation.id
    assert fork.title == "Chat (fork)"
    assert (fork.system_prompt, fork.model_id, fork.params) == ("sys", "m", {"k": 1})
    path = store.active_path(fork.id)
    assert [m.content for m in path] == ["q1", "a1", "q2"]
    assert {m.id for m in path}.isdisjoint(m.id for m in messages)
    # Changing the fork leaves the original alone.
    store.append_message(fork.id, path[-1].id, "assistant", "different answer")
    assert _contents(store, conversation) == ["q1", "a1", "q2", "a2"]
    assert _contents(store, fork) == ["q1", "a1", "q2", "different answer"]


# --- messages -------------------------------------------------------------------------------


def test_append_builds_the_active_path(store: Store) -> None:
    conversation, messages = _chat(store, "hi", "hello", "how are you?")
    assert _contents(store, conversation) == ["hi", "hello", "how are you?"]
    assert store.get_conversation(conversation.id).active_leaf_id == messages[-1].id
    assert [m.parent_id for m in messages] == [None, messages[0].id, messages[1].id]
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert store.children(messages[0].id) == [messages[1]]
    assert store.get_message(messages[1].id) == messages[1]


def test_append_into_another_conversation_is_refused(store: Store) -> None:
    _, messages = _chat(store, "mine")
    other = store.create_conversation("other")
    with pytest.raises(InvalidInputError, match="another conversation"):
        store.append_message(other.id, messages[0].id, "user", "sneaky")
    assert store.active_path(other.id) == []


def test_edit_adds_a_sibling_and_keeps_the_original(store: Store) -> None:
    conversation, messages = _chat(store, "q1", "a1", "q2 typo", "a2")
    edited = store.edit_message(messages[2].id, "q2 fixed")
    assert edited.parent_id == messages[1].id and edited.role == "user"
    assert _contents(store, conversation) == ["q1", "a1", "q2 fixed"]
    assert store.get_message(messages[2].id).content == "q2 typo"
    siblings, index = store.siblings(edited.id)
    assert [m.content for m in siblings] == ["q2 typo", "q2 fixed"] and index == 1


def test_edit_the_first_message_adds_a_root_sibling(store: Store) -> None:
    conversation, messages = _chat(store, "first try", "reply")
    edited = store.edit_message(messages[0].id, "second try")
    assert edited.parent_id is None
    assert _contents(store, conversation) == ["second try"]
    siblings, index = store.siblings(messages[0].id)
    assert [m.content for m in siblings] == ["first try", "second try"] and index == 0
    store.switch_to_sibling(messages[0].id)
    assert _contents(store, conversation) == ["first try", "reply"]


def test_regenerate_adds_a_sibling_reply(store: Store) -> None:
    conversation, messages = _chat(store, "tell a joke", "joke one")
    reply = store.begin_reply(conversation.id, messages[0].id, "model-x", {"temperature": 1.0})
    assert (reply.role, reply.status, reply.content) == ("assistant", "streaming", "")
    assert (reply.model_id, reply.params) == ("model-x", {"temperature": 1.0})
    done = store.finish_reply(reply.id, "joke two", "complete", stats={"decode_tps": 12.5})
    assert done.stats == {"decode_tps": 12.5} and done.status == "complete"
    siblings, index = store.siblings(done.id)
    assert [m.content for m in siblings] == ["joke one", "joke two"] and index == 1
    assert _contents(store, conversation) == ["tell a joke", "joke two"]


def test_switch_to_sibling_returns_to_the_last_visited_leaf(store: Store) -> None:
    conversation, messages = _chat(store, "q", "answer A", "follow-up A", "deep A")
    # Branch A has two leaves below "answer A"; the one visited last must come back.
    side = store.append_message(conversation.id, messages[1].id, "user", "side A")
    store.switch_to_sibling(messages[2].id)
    assert _contents(store, conversation) == ["q", "answer A", "follow-up A", "deep A"]

    reply_b = store.begin_reply(conversation.id, messages[0].id)
    store.finish_reply(reply_b.id, "answer B", "complete")
    store.append_message(conversation.id, reply_b.id, "user", "follow-up B")
    assert _contents(store, conversation) == ["q", "answer B", "follow-up B"]

    leaf = store.switch_to_sibling(messages[1].id)
    assert leaf.id == messages[3].id
    assert _contents(store, conversation) == ["q", "answer A", "follow-up A", "deep A"]
    assert store.switch_to_sibling(reply_b.id).content == "follow-up B"

    store.switch_to_sibling(side.id)
    store.switch_to_sibling(reply_b.id)
    assert store.switch_to_sibling(messages[1].id).id == side.id


def test_siblings_report_position_for_the_arrows(store: Store) -> None:
    conversation, messages = _chat(store, "q")
    replies = []
    for text in ("one", "two", "three"):
        reply = store.begin_reply(conversation.id, messages[0].id)
        replies.append(store.finish_reply(reply.id, text, "complete"))
    assert [store.siblings(r.id)[1] for r in replies] == [0, 1, 2]
    assert [m.id for m in store.siblings(replies[1].id)[0]] == [r.id for r in replies]
    assert store.siblings(messages[0].id) == ([messages[0]], 0)


def test_delete_subtree_moves_the_active_leaf_to_a_remaining_branch(store: Store) -> None:
    conversation, messages = _chat(store, "q", "a1", "q2", "a2")
    other = store.begin_reply(conversation.id, messages[0].id)
    store.finish_reply(other.id, "b1", "complete")
    store.switch_to_sibling(messages[1].id)  # back on the a-branch, the one about to go

    new_leaf = store.delete_message(messages[1].id)
    assert new_leaf is not None and new_leaf.id == other.id
    assert _contents(store, conversation) == ["q", "b1"]
    for gone in messages[1:]:
        with pytest.raises(NotFoundError):
            store.get_message(gone.id)
    assert store.children(messages[0].id) == [store.get_message(other.id)]

    # Deleting the last child leaves the parent as the leaf.
    assert store.delete_message(other.id) == store.get_message(messages[0].id)
    assert _contents(store, conversation) == ["q"]
    assert store.delete_message(messages[0].id) is None
    assert store.active_path(conversation.id) == []
    assert store.get_conversation(conversation.id).active_leaf_id is None


def test_delete_off_the_active_path_keeps_the_place(store: Store) -> None:
    conversation, messages = _chat(store, "q", "a1")
    extra = store.edit_message(messages[0].id, "q alt")
    store.switch_to_sibling(messages[0].id)
    assert store.delete_message(extra.id) == messages[1]
    assert _contents(store, conversation) == ["q", "a1"]


def test_delete_a_root_moves_to_another_root(store: Store) -> None:
    conversation, messages = _chat(store, "q", "a")
    other_root = store.edit_message(messages[0].id, "q2")
    assert store.delete_message(other_root.id) == messages[1]
    assert _contents(store, conversation) == ["q", "a"]


def test_long_conversation_deletes_in_one_step(store: Store) -> None:
    # A cascade per level would hit SQLite's trigger depth limit (1000) here.
    conversation = store.create_conversation()
    parent = None
    first = None
    for i in range(1200):
        parent = store.append_message(conversation.id, parent, "user", f"m{i}").id
        first = first or parent
    assert len(store.active_path(conversation.id)) == 1200
    assert first is not None and store.delete_message(first) is None
    assert store.all_messages(conversation.id) == []


def test_unknown_ids_raise_not_found(store: Store) -> None:
    conversation, _ = _chat(store, "q")
    calls = [
        lambda: store.get_conversation(999),
        lambda: store.rename(999, "x"),
        lambda: store.set_pinned(999, True),
        lambda: store.update_settings(999, system_prompt="x"),
        lambda: store.delete_conversation(999),
        lambda: store.active_path(999),
        lambda: store.append_message(999, None, "user", "hi"),
        lambda: store.append_message(conversation.id, 999, "user", "hi"),
        lambda: store.get_message(999),
        lambda: store.children(999),
        lambda: store.siblings(999),
        lambda: store.edit_message(999, "x"),
        lambda: store.begin_reply(conversation.id, 999),
        lambda: store.update_streaming(999, "x"),
        lambda: store.finish_reply(999, "x"),
        lambda: store.switch_to_sibling(999),
        lambda: store.delete_message(999),
        lambda: store.fork_conversation(999),
        lambda: store.export_json(999),
    ]
    for call in calls:
        with pytest.raises(NotFoundError, match="999"):
            call()
    assert _contents(store, conversation) == ["q"]


def test_finished_reply_cannot_be_streamed_into(store: Store) -> None:
    conversation, messages = _chat(store, "q")
    reply = store.begin_reply(conversation.id, messages[0].id)
    store.finish_reply(reply.id, "final", "stopped")
    with pytest.raises(InvalidInputError, match="not a reply being written"):
        store.update_streaming(reply.id, "overwrite")
    with pytest.raises(InvalidInputError, match="not a reply being written"):
        store.finish_reply(reply.id, "overwrite")
    assert store.get_message(reply.id).content == "final"
    with pytest.raises(InvalidInputError, match="status"):
        store.finish_reply(store.begin_reply(conversation.id, messages[0].id).id, "x", "streaming")
