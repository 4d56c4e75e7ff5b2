"""Writing into the store: one transaction per conversation, the same file twice adds nothing,
a longer export adds only the new messages, a refused conversation leaves nothing behind,
Cancel keeps whole conversations, and a whole import can be undone."""

from __future__ import annotations

import copy
import threading
from pathlib import Path

import pytest

from app.importers import run, writer
from app.store.conversations import Store
from app.store.records import MAX_CONTENT_CHARS
from tests.app.importers.helpers import write_json
from tests.app.importers.samples import chatgpt_conversation, gpt_message, gpt_node


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "data" / "conversations.sqlite3") as opened:
        yield opened


def _two(tmp_path: Path, name: str = "conversations.json") -> Path:
    second = copy.deepcopy(chatgpt_conversation())
    second["id"] = second["conversation_id"] = "conv-2"
    second["title"] = "Second"
    return write_json(tmp_path / name, [chatgpt_conversation(), second])


def _statuses(report: run.ImportReport) -> list[tuple[str, int]]:
    return [(o.status, o.new_messages) for i in report.inputs for o in i.outcomes]


def test_the_tree_in_the_store_and_the_active_branch(tmp_path: Path, store: Store) -> None:
    report = run.import_paths([_two(tmp_path)], store)
    assert _statuses(report) == [("imported", 7), ("imported", 7)]
    conversation = store.get_conversation(report.inputs[0].outcomes[0].conversation_id)
    assert conversation.title == "Greetings"
    path = store.active_path(conversation.id)
    assert [(m.role, m.content) for m in path] == [
        ("user", "Hello?"),
        ("assistant", "Hi there."),
        ("user", "Thanks"),
        ("assistant", "Welcome."),
    ]
    assert path[1].reasoning == "They said hello." and path[1].trace.startswith("Code for")
    assert path[1].model_id == "gpt-5-thinking"
    assert conversation.model_id is None  # continuing uses the person's own model
    siblings, index = store.siblings(path[1].id)
    assert [m.content for m in siblings] == ["Hi there.", "Hello again."] and index == 0
    roots = [m for m in store.all_messages(conversation.id) if m.parent_id is None]
    assert [m.content for m in roots] == ["Hello?", "Hello!"]
    assert path[0].created_at == 100.0


def test_importing_again_adds_nothing(tmp_path: Path, store: Store) -> None:
    path = _two(tmp_path)
    run.import_paths([path], store)
    before = [store.all_messages(c.id) for c in store.list_conversations()]
    again = run.import_paths([path], store)
    assert _statuses(again) == [("unchanged", 0), ("unchanged", 0)]
    assert again.batch_id is None  # nothing to undo
    assert [store.all_messages(c.id) for c in store.list_conversations()] == before


def test_a_longer_export_adds_only_the_new_messages(tmp_path: Path, store: Store) -> None:
    run.import_paths([_two(tmp_path)], store)
    conversation_id = store.list_conversations()[-1].id
    person = store.append_message(
        conversation_id, store.active_path(conversation_id)[-1].id, "user", "My own follow-up"
    )
    longer = chatgpt_conversation()
    mapping = longer["mapping"]
    mapping["a2"]["children"] = ["u3"]
    mapping["u3"] = gpt_node("u3", "a2", ["a3x"], gpt_message("u3", "user", parts=["Again"]))
    mapping["a3x"] = gpt_node("a3x", "u3", [], gpt_message("a3x", "assistant", parts=["Yes"]))
    mapping["a1b"]["children"] = ["u4"]
    mapping["u4"] = gpt_node("u4", "a1b", [], gpt_message("u4", "user", parts=["Branch"]))
    mapping["u2"]["message"]["content"]["parts"] = ["Changed text is never overwritten"]
    report = run.import_paths([write_json(tmp_path / "later.json", [longer])], store)
    assert _statuses(report) == [("updated", 3)]
    messages = store.all_messages(conversation_id)
    texts = [m.content for m in messages]
    assert "Thanks" in texts and "Changed text is never overwritten" not in texts
    assert texts[-3:] == ["Again", "Yes", "Branch"]
    assert store.get_conversation(conversation_id).active_leaf_id == person.id  # not moved
    by_text = {m.content: m for m in messages}
    assert by_text["Again"].parent_id == by_text["Welcome."].id
    assert by_text["Branch"].parent_id == by_text["Hello again."].id


def test_a_conversation_the_store_cannot_hold_is_refused_whole(
    tmp_path: Path, store: Store
) -> None:
    data = chatgpt_conversation()
    data["mapping"]["a2"]["message"]["content"]["parts"] = ["x" * (MAX_CONTENT_CHARS + 1)]
    good = copy.deepcopy(chatgpt_conversation())
    good["id"] = good["conversation_id"] = "conv-2"
    report = run.import_paths([write_json(tmp_path / "c.json", [data, good])], store)
    (refused, imported) = report.inputs[0].outcomes
    assert refused.status == "refused" and "too long" in refused.reason
    assert imported.status == "imported"
    assert [c.title for c in store.list_conversations()] == ["Greetings"]
    assert len(store.all_messages(imported.conversation_id)) == 7


def test_progress_per_conversation_and_cancel_keeps_whole_ones(
    tmp_path: Path, store: Store
) -> None:
    cancel = threading.Event()
    seen: list[writer.Outcome] = []

    def progress(outcome: writer.Outcome) -> None:
        seen.append(outcome)
        cancel.set()

    report = run.import_paths([_two(tmp_path)], store, progress=progress, cancel=cancel)
    assert report.cancelled
    assert [o.status for o in seen] == ["imported"]
    (only,) = store.list_conversations()
    assert len(store.all_messages(only.id)) == 7


def test_undo_removes_the_import_but_not_what_the_person_added(
    tmp_path: Path, store: Store
) -> None:
    own = store.create_conversation("Mine")
    store.append_message(own.id, None, "user", "untouched")
    first = run.import_paths([_two(tmp_path)], store)
    kept_id = first.inputs[0].outcomes[0].conversation_id
    leaf = store.active_path(kept_id)[-1]
    mine = store.append_message(kept_id, leaf.id, "user", "continued from the import")
    result = writer.undo_batch(store, first.batch_id)
    assert result.removed_conversations == 1
    assert result.kept_messages == 4  # the path the person continued from
    assert {c.title for c in store.list_conversations()} == {"Mine", "Greetings"}
    assert [m.content for m in store.active_path(kept_id)][-1] == mine.content
    assert len(store.all_messages(kept_id)) == 5
    again = run.import_paths([_two(tmp_path)], store)  # the rest comes back on a re-import
    assert _statuses(again) == [("updated", 3), ("imported", 7)]


def test_a_dry_run_writes_nothing(tmp_path: Path, store: Store) -> None:
    report = run.import_paths([_two(tmp_path)], store, dry_run=True)
    assert _statuses(report) == [("imported", 7), ("imported", 7)]
    assert store.list_conversations() == []


def test_a_deleted_import_is_not_brought_back(tmp_path: Path, store: Store) -> None:
    report = run.import_paths([_two(tmp_path)], store)
    store.delete_conversation(report.inputs[0].outcomes[0].conversation_id)
    again = run.import_paths([_two(tmp_path)], store)
    assert [o.status for o in again.inputs[0].outcomes] == ["skipped", "unchanged"]


def test_empty_conversations_are_skipped(tmp_path: Path, store: Store) -> None:
    empty = {
        "id": "e",
        "title": "Nothing",
        "mapping": {"root": gpt_node("root", None, [], None)},
        "current_node": "root",
    }
    report = run.import_paths([write_json(tmp_path / "c.json", [empty])], store)
    assert [(o.status, o.reason) for o in report.inputs[0].outcomes] == [
        ("skipped", "It has no messages.")
    ]
    assert store.list_conversations() == []


def test_imported_files_are_kept_beside_the_store(tmp_path: Path, store: Store) -> None:
    data = chatgpt_conversation()
    data["mapping"]["u2"]["message"]["content"] = {
        "content_type": "multimodal_text",
        "parts": [
            {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-X1"},
            "See",
        ],
    }
    folder = tmp_path / "export"
    write_json(folder / "conversations.json", [data])
    (folder / "file-X1-cat.png").write_bytes(b"\x89PNG")
    report = run.import_paths([folder], store)
    conversation_id = report.inputs[0].outcomes[0].conversation_id
    (u2,) = [m for m in store.all_messages(conversation_id) if m.content == "See"]
    (attachment,) = u2.attachments
    assert attachment["name"] == "file-X1-cat.png" and attachment["size"] == 4
    assert (store.path.parent / attachment["file"]).read_bytes() == b"\x89PNG"
    edited = store.edit_message(u2.id, "See this")  # an imported attachment stays editable
    assert edited.attachments == u2.attachments


def test_a_failure_while_writing_leaves_nothing_of_that_conversation(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.store.records import StoreError

    calls = []

    def failing_activate(db, conversation_id, leaf_id):  # after every message was inserted
        calls.append(conversation_id)
        if len(calls) == 1:
            raise StoreError("The disk is full.")
        return original(db, conversation_id, leaf_id)

    original = Store.activate_leaf
    monkeypatch.setattr(Store, "activate_leaf", staticmethod(failing_activate))
    report = run.import_paths([_two(tmp_path)], store)
    assert [(o.status, o.reason) for o in report.inputs[0].outcomes] == [
        ("refused", "The disk is full."),
        ("imported", ""),
    ]
    (kept,) = store.list_conversations()
    assert kept.title == "Second" and len(store.all_messages(kept.id)) == 7


def test_only_the_chosen_conversations_are_imported(tmp_path: Path, store: Store) -> None:
    report = run.import_paths([_two(tmp_path)], store, only={("chatgpt", "conv-2")})
    assert [o.source_id for o in report.inputs[0].outcomes] == ["conv-2"]
    assert [c.title for c in store.list_conversations()] == ["Second"]


def test_a_branchwise_export_keeps_its_settings_and_statuses(tmp_path: Path, store: Store) -> None:
    from tests.app.importers.samples import branchwise_export

    report = run.import_paths([write_json(tmp_path / "chat.json", branchwise_export())], store)
    conversation = store.get_conversation(report.inputs[0].outcomes[0].conversation_id)
    assert (conversation.title, conversation.system_prompt, conversation.model_id) == (
        "Local",
        "Be brief.",
        "mlx-community/Qwen3-0.6B-4bit",
    )
    path = store.active_path(conversation.id)
    assert [(m.content, m.status, m.reasoning) for m in path] == [
        ("Hi", "complete", ""),
        ("Hey", "stopped", "hm"),
    ]
    assert store.siblings(path[1].id)[0][0].model_id == "qwen"
