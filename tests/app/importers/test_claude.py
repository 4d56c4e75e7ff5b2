"""Claude.ai's export: parents from `parent_message_uuid`, siblings by time, the newest leaf
shown, thinking as reasoning, tools as the trace, attached text kept, old exports chained."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from tests.app.importers.helpers import by_id, conversations, read_entries, shape, write_json
from tests.app.importers.samples import claude_conversation


def test_the_tree_message_by_message(tmp_path: Path) -> None:
    path = tmp_path / "claude.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("conversations.json", json.dumps([claude_conversation()]))
        archive.writestr("users.json", "[]")
        archive.writestr("projects.json", "[]")
    formats, _ = read_entries(path)
    assert formats == ["claude"]
    (conv,) = conversations(path)
    assert shape(conv) == [
        ("u1", None, "user", "Read this\nplease"),
        ("a1", "u1", "assistant", "It says hello."),
        ("u2", "a1", "user", "Thanks"),
        ("a2", "u2", "assistant", "Any time."),
        ("a1b", "u1", "assistant", "Hello, it says."),
        ("orphan", None, "user", "Lost parent"),
    ]
    messages = by_id(conv)
    assert messages["a1"].reasoning == "Let me look."
    assert "Used web_search" in messages["a1"].trace and "found" in messages["a1"].trace
    text, photo = messages["u1"].attachments
    assert (text.name, text.text) == ("notes.txt", "hello")
    assert (photo.name, photo.missing) == ("photo.png", True)
    assert conv.active_leaf_id == "a1b"  # no pointer in the export: the newest leaf
    assert conv.title == "Read this"  # "" name: the first line of the first user message
    assert messages["u1"].created_at == 1772359200.0


def test_an_old_export_without_parents_is_a_chain(tmp_path: Path) -> None:
    data = claude_conversation()
    for message in data["chat_messages"]:
        del message["parent_message_uuid"]
        message["content"] = []
    (conv,) = conversations(write_json(tmp_path / "conversations.json", [data]))
    ids = [m.source_id for m in conv.messages]
    assert [m.parent_id for m in conv.messages] == [None, *ids[:-1]]
    assert by_id(conv)["a1"].content == ""  # the old text field was empty too
    assert by_id(conv)["a2"].content == "Any time."
