"""Jan's thread folders (parents from metadata, `activeChildId`) and Chatbox's exported data
(the shown path plus stored fork tails)."""

from __future__ import annotations

from pathlib import Path

from tests.app.importers.helpers import by_id, conversations, shape, write_json, write_jsonl
from tests.app.importers.samples import chatbox_export, jan_thread


def test_jan_threads(tmp_path: Path) -> None:
    thread, messages = jan_thread()
    data = tmp_path / "data"
    write_json(data / "threads" / "jan-1" / "thread.json", thread)
    lines = write_jsonl(data / "threads" / "jan-1" / "messages.jsonl", messages)
    with lines.open("a", encoding="utf-8") as stream:
        stream.write('{"id": "u3", "role": "user", "content": [')  # cut short by a crash
    (conv,) = conversations(data)
    assert shape(conv) == [
        ("u1", None, "user", "Hello Jan"),
        ("a1", "u1", "assistant", "Hi."),
        ("u2", "a1", "user", "Bye"),
        ("a1b", "u1", "assistant", "Hey!"),
    ]
    assert conv.active_leaf_id == "u2"  # activeChildId picks a1 over the newer a1b
    assert conv.system_prompt == "You are Jan."
    assert by_id(conv)["u1"].created_at == 1750000000.0
    assert any("cut short" in w for w in conv.warnings)


def test_jan_legacy_threads_are_chains(tmp_path: Path) -> None:
    thread, messages = jan_thread()
    for message in messages:
        del message["metadata"]["parentId"]
    write_json(tmp_path / "threads" / "t" / "thread.json", thread)
    write_jsonl(tmp_path / "threads" / "t" / "messages.jsonl", messages)
    (conv,) = conversations(tmp_path)
    assert [m.parent_id for m in conv.messages] == [None, "u1", "a1", "a1b"]


def test_chatbox_forks(tmp_path: Path) -> None:
    (conv,) = conversations(
        write_json(tmp_path / "chatbox-exported-data-2026-1-1.json", chatbox_export())
    )
    assert shape(conv) == [
        ("u1", None, "user", "Hi"),
        ("a1x", "u1", "assistant", "Old hello"),  # the stored tail, list 0
        ("a1", "u1", "assistant", "Hello"),  # the shown tail, list 1
        ("u2", "a1", "user", "Bye"),
        ("a2", "u2", "assistant", "Bye!"),
    ]
    assert by_id(conv)["a1"].reasoning == "greet"
    assert conv.system_prompt == "You are helpful."
    assert conv.active_leaf_id == "a2"
    assert conv.title == "Box chat"
