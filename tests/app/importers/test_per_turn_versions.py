"""Formats that keep versions per turn (LM Studio, SillyTavern swipes, text-generation-webui):
the versions of a turn are siblings under the selected version of the turn before, and only
the selected one continues; ids come from the content, so a longer file finds them again."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app.importers.helpers import conversations, read_entries, write_json, write_jsonl
from tests.app.importers.samples import lmstudio_conversation, sillytavern_lines, textgen_history


def _tree(conv):  # (text, parent text, role)
    text = {m.source_id: m.content for m in conv.messages}
    return [(m.content, text.get(m.parent_id), m.role) for m in conv.messages]


def test_lm_studio_versions(tmp_path: Path) -> None:
    folder = tmp_path / "conversations"
    write_json(folder / "work" / "1754557798069.conversation.json", lmstudio_conversation())
    formats, _ = read_entries(folder)
    assert formats == ["lmstudio"]
    (conv,) = conversations(folder)
    assert _tree(conv) == [
        ("Hi there", None, "user"),
        ("First", "Hi there", "assistant"),
        ("Second", "Hi there", "assistant"),
        ("Go on", "Second", "user"),
        ("Stop", "Second", "user"),
        ("Going", "Go on", "assistant"),
    ]
    second = conv.messages[2]
    assert second.reasoning == "pondering" and second.model == "qwen/qwen3-8b"
    assert conv.active_leaf_id == conv.messages[5].source_id
    assert conv.system_prompt == "Be terse."  # the per-chat setting wins
    assert conv.title == "Hi there"  # "Untitled"
    assert conv.source_id == "1754557798069"


def test_sillytavern_swipes(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "Seraphina - 2025-05-11@19h32m07s.jsonl", sillytavern_lines())
    with path.open("a", encoding="utf-8") as stream:
        stream.write('{"name": "You", "is_user": true, "mes": "cut sh')  # a crash mid-line
    (conv,) = conversations(path)
    assert _tree(conv) == [
        ("Hello, traveler.", None, "assistant"),  # the greeting's swipes: two roots
        ("Welcome back.", None, "assistant"),
        ("Hi!", "Welcome back.", "user"),
        ("How are you?", "Hi!", "assistant"),
    ]
    assert conv.messages[1].model == "claude"
    assert conv.messages[3].reasoning == "Be warm."
    assert conv.messages[3].created_at == 1746992100.0  # ISO, UTC
    assert conv.active_leaf_id == conv.messages[3].source_id
    assert conv.title == "Seraphina - 2025-05-11@19h32m07s"
    assert any("Line 5" in w for w in conv.warnings)


def test_textgen_versions(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "logs" / "chat" / "Assistant" / "20260503-10-00-00.json", textgen_history()
    )
    (conv,) = conversations(path)
    assert _tree(conv) == [
        ("Greetings!", None, "assistant"),
        ("What's up?", "Greetings!", "user"),
        ("Not much.", "What's up?", "assistant"),
        ("Plenty!", "What's up?", "assistant"),
    ]
    assert conv.active_leaf_id == conv.messages[2].source_id
    assert conv.title == "What's up?"


def test_a_longer_file_keeps_the_ids_of_what_was_there(tmp_path: Path) -> None:
    lines = sillytavern_lines()
    first = conversations(write_jsonl(tmp_path / "a.jsonl", lines))[0]
    lines.append({"name": "You", "is_user": True, "mes": "Fine.", "extra": {}})
    longer = conversations(write_jsonl(tmp_path / "b.jsonl", lines))[0]
    assert [m.source_id for m in longer.messages[:-1]] == [m.source_id for m in first.messages]
    assert json.dumps(longer.source_id) == json.dumps(first.source_id)
