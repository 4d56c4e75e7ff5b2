"""ChatGPT's export read as a tree: parents from `parent` (not the lossy `children`), hidden
nodes skipped, an answer's chain folded into one message with reasoning and a trace, the
current branch, files from the export zip and the 2026 split export."""

from __future__ import annotations

import copy
import json
import zipfile
from pathlib import Path

from tests.app.importers.helpers import by_id, conversations, refusals, shape, write_json
from tests.app.importers.samples import chatgpt_conversation, gpt_message, gpt_node


def test_the_tree_message_by_message(tmp_path: Path) -> None:
    (conv,) = conversations(write_json(tmp_path / "conversations.json", [chatgpt_conversation()]))
    assert shape(conv) == [
        ("u1", None, "user", "Hello?"),
        ("a1", "u1", "assistant", "Hi there."),  # citation marker removed
        ("u2", "a1", "user", "Thanks"),
        ("a2", "u2", "assistant", "Welcome."),
        ("a1b", "u1", "assistant", "Hello again."),  # the regeneration, second sibling
        ("u1b", None, "user", "Hello!"),  # the edited first message: a second root
        ("a3", "u1b", "assistant", "Hey."),
    ]
    messages = by_id(conv)
    assert messages["a1"].reasoning == "They said hello."
    assert messages["a1"].trace == "Code for python:\n1+1\n\nOutput of python:\n2"
    assert messages["a1"].model == "gpt-5-thinking"
    assert messages["a2"].model == "gpt-4o"  # the conversation's default slug
    assert messages["a1"].created_at == 103.0  # earliest of the chain (times are not ordered)
    assert conv.system_prompt == "I am a cat.\n\nAnswer briefly."
    assert conv.active_leaf_id == "a2"
    assert conv.title == "Greetings"
    assert conv.source_id == "conv-1"


def test_no_current_node_shows_the_newest_leaf_and_a_null_title_uses_the_first_line(
    tmp_path: Path,
) -> None:
    data = chatgpt_conversation()
    data["current_node"] = None
    data["title"] = None
    (conv,) = conversations(write_json(tmp_path / "c.json", [data]))
    assert conv.active_leaf_id == "a3"
    assert conv.title == "Hello!"


def test_a_pointer_to_an_inner_node_descends_to_its_leaf(tmp_path: Path) -> None:
    data = chatgpt_conversation()
    data["current_node"] = "th1"  # inside a1's chain
    (conv,) = conversations(write_json(tmp_path / "c.json", [data]))
    assert conv.active_leaf_id == "a2"


def test_broken_links_and_cycles_keep_every_message(tmp_path: Path) -> None:
    data = chatgpt_conversation()
    data["mapping"]["u2"]["parent"] = "nowhere"
    data["mapping"]["u1b"]["parent"] = "a3"  # u1b <-> a3 loop
    (conv,) = conversations(write_json(tmp_path / "c.json", [data]))
    ids = [m.source_id for m in conv.messages]
    assert sorted(ids) == sorted(["u1", "a1", "u2", "a2", "a1b", "u1b", "a3"])
    assert by_id(conv)["u2"].parent_id is None
    assert any("not in the export" in w for w in conv.warnings)
    assert any("loop" in w for w in conv.warnings)
    loop = {by_id(conv)["u1b"].parent_id, by_id(conv)["a3"].parent_id}
    assert None in loop


def test_a_branch_inside_an_answer_chain_gives_one_message_per_path(tmp_path: Path) -> None:
    data = chatgpt_conversation()
    mapping = data["mapping"]
    mapping["th1"]["children"] = ["code1", "a1c"]
    mapping["a1c"] = gpt_node(
        "a1c", "th1", [], gpt_message("a1c", "assistant", parts=["Short."], t=140.0)
    )
    (conv,) = conversations(write_json(tmp_path / "c.json", [data]))
    messages = by_id(conv)
    assert messages["a1c"].parent_id == "u1"
    assert messages["a1c"].reasoning == "They said hello."  # the shared thoughts
    assert messages["a1c"].content == "Short."
    assert [m.source_id for m in conv.messages if m.parent_id == "u1"] == ["a1", "a1c", "a1b"]


def test_unfinished_answer_is_stopped_and_an_entry_that_is_not_a_conversation_is_refused(
    tmp_path: Path,
) -> None:
    data = chatgpt_conversation()
    data["mapping"]["a2"]["message"]["status"] = "in_progress"
    path = write_json(
        tmp_path / "c.json",
        [{"id": "project", "name": "Folder"}, data, {"id": "x", "mapping": "broken"}],
    )
    (conv,) = conversations(path)
    assert by_id(conv)["a2"].status == "stopped"
    assert [r.where for r in refusals(path)] == ["c.json, entry 1", "c.json, entry 3"]


def test_lone_surrogates_become_replacement_characters(tmp_path: Path) -> None:
    data = chatgpt_conversation()
    data["mapping"]["u2"]["message"]["content"]["parts"] = ["bad \ud83d end"]
    path = tmp_path / "c.json"
    path.write_text(json.dumps([data]), encoding="utf-8")  # ensure_ascii: "\ud83d" escape
    (conv,) = conversations(path)
    assert by_id(conv)["u2"].content == "bad \ufffd end"


def _image_conversation() -> dict:
    data = chatgpt_conversation()
    data["mapping"]["u2"]["message"]["content"] = {
        "content_type": "multimodal_text",
        "parts": [
            {
                "content_type": "image_asset_pointer",
                "asset_pointer": "file-service://file-AbC123",
                "size_bytes": 4,
            },
            {"content_type": "image_asset_pointer", "asset_pointer": "sediment://file_missing9"},
            "Thanks",
        ],
    }
    data["mapping"]["u2"]["message"]["metadata"] = {
        "attachments": [
            {"id": "file-AbC123", "name": "cat.png"},
            {"id": "file_missing9", "name": "gone.jpg"},
        ]
    }
    return data


def test_the_export_zip_keeps_uploaded_images_and_names_missing_ones(tmp_path: Path) -> None:
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("conversations.json", json.dumps([_image_conversation()]))
        archive.writestr("file-AbC123-cat.png", b"\x89PNG")
        archive.writestr("user.json", "{}")
    (conv,) = conversations(path)
    u2 = by_id(conv)["u2"]
    assert u2.content == "Thanks"
    found, missing = u2.attachments
    assert (found.name, found.data, found.mime_type) == ("cat.png", b"\x89PNG", "image/png")
    assert (missing.name, missing.missing) == ("gone.jpg", True)


def test_the_2026_split_export_with_dat_assets(tmp_path: Path) -> None:
    second = copy.deepcopy(chatgpt_conversation())
    second["id"] = second["conversation_id"] = "conv-2"
    path = tmp_path / "export.zip"
    manifest = {
        "version": 1,
        "manifest_file": "export_manifest.json",
        "logical_files": {
            "conversations.json": {
                "files": [
                    "conversations-000.json",
                    "conversations-001.json",
                    "conversations-002.json",
                ],
                "sharded": True,
            }
        },
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("export_manifest.json", json.dumps(manifest))
        archive.writestr("conversations-000.json", json.dumps([_image_conversation()]))
        archive.writestr("conversations-001.json", json.dumps([second]))
        archive.writestr("file-AbC123.dat", b"\x89PNG")
        archive.writestr(
            "conversation_asset_file_names.json", json.dumps({"file-AbC123.dat": "kitten.png"})
        )
    found = conversations(path)
    assert [c.source_id for c in found] == ["conv-1", "conv-2"]
    assert by_id(found[0])["u2"].attachments[0].name == "kitten.png"
    assert by_id(found[0])["u2"].attachments[0].data == b"\x89PNG"
    (missing,) = refusals(path)  # the third shard: a cut-short download, said so
    assert missing.where == "conversations-002.json"
    assert "missing" in missing.reason


def test_a_truncated_file_keeps_the_whole_conversations_before_the_cut(tmp_path: Path) -> None:
    second = copy.deepcopy(chatgpt_conversation())
    second["id"] = second["conversation_id"] = "conv-2"
    text = json.dumps([chatgpt_conversation(), second])
    path = tmp_path / "conversations.json"
    path.write_text(text[: len(text) - 200], encoding="utf-8")
    assert [c.source_id for c in conversations(path)] == ["conv-1"]
    (cut,) = refusals(path)
    assert "could not be read" in cut.reason
