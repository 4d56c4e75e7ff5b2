"""Presets and projects travel with exports: `branchwise export` carries them all and which chat
belongs where, `branchwise import` restores them (a second import adds nothing), a one-chat
export brings its project and preset along, and the instructions' history survives, so a
restored reply still names the version it was asked with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.importers.cli import main
from app.store.conversations import Store
from app.store.project_records import ProjectFields


def _fill(store: Store) -> None:
    coding = store.create_preset("Coding", {"system_prompt": "Code.", "params": {"top_k": 5}})
    store.create_preset("Unused", {"params": {"temperature": 1.5}})
    research = store.create_project(
        ProjectFields("Research", "Cite.", "llama", coding.id, ("notes",), ("papers",))
    )
    store.update_project(research.id, ProjectFields("Research", "Cite sources.", "llama"))
    store.create_project(ProjectFields("Empty"), collapsed=True)
    inside = store.create_conversation("Inside", project_id=research.id, preset_id=coding.id)
    question = store.append_message(inside.id, None, "user", "Why?")
    reply = store.begin_reply(inside.id, question.id)
    store.finish_reply(reply.id, "Because.", provenance={"token_ids": [1]})
    loose = store.create_conversation("Loose")
    store.append_message(loose.id, None, "user", "Hi")


def test_an_archive_restores_presets_projects_and_membership_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, archive, data = tmp_path / "a", tmp_path / "all.json", tmp_path / "b"
    with Store.open(source / "conversations.sqlite3") as store:
        _fill(store)
    assert main(["export", "--data-dir", str(source), "--out", str(archive)]) == 0
    head = json.loads(archive.read_text(encoding="utf-8"))
    assert [p["name"] for p in head["presets"]] == ["Coding", "Unused"]
    assert list(head).index("projects") < list(head).index("conversations")

    capsys.readouterr()
    assert main(["import", str(archive), "--data-dir", str(data)]) == 0
    out = capsys.readouterr().out
    assert "Project “Research”: restored." in out and "Preset “Unused”: restored." in out
    with Store.open(data / "conversations.sqlite3") as store:
        presets = {p.name: p for p in store.list_presets()}
        projects = {p.name: p for p in store.list_projects()}
        assert set(presets) == {"Coding", "Unused"} and set(projects) == {"Empty", "Research"}
        research = projects["Research"]
        assert (research.instructions, research.instructions_version) == ("Cite sources.", 2)
        assert projects["Empty"].collapsed
        chats = {c.title: c for c in store.list_conversations()}
        assert chats["Inside"].project_id == research.id
        assert chats["Inside"].preset_id == presets["Coding"].id
        assert chats["Loose"].project_id is None
        assert store.system_prompt_for(chats["Inside"].id) == "Cite sources."
        assert store.system_prompt_for(chats["Inside"].id, version=1) == "Cite."
        reply = store.active_path(chats["Inside"].id)[-1]
        assert reply.provenance["instructions"]["version"] == 2

    assert main(["import", str(archive), "--data-dir", str(data)]) == 0
    out = capsys.readouterr().out
    assert "Project “Research”: already here." in out
    assert "Imported: 0 new, 0 updated (0 new messages in all), 2 unchanged" in out
    with Store.open(data / "conversations.sqlite3") as store:
        assert len(store.list_presets()) == 2 and len(store.list_projects()) == 2


def test_a_one_chat_export_brings_its_project_and_preset(tmp_path: Path) -> None:
    with Store.open(tmp_path / "a.sqlite3") as store:
        _fill(store)
        inside = next(c for c in store.list_conversations() if c.title == "Inside")
        exported = store.export_json(inside.id)
    assert exported["project"]["name"] == "Research" and exported["preset"]["name"] == "Coding"
    with Store.open(tmp_path / "b.sqlite3") as store:
        store.create_preset("Coding", {})  # a different preset of the same name
        first = store.import_json(exported)
        again = store.import_json(exported)  # the window's import makes a new chat each time
        assert first.project_id == again.project_id is not None
        assert store.get_project(first.project_id).name == "Research"
        restored = store.get_preset(first.preset_id or 0)
        assert restored.name == "Coding (imported)" and restored.settings["params"]["top_k"] == 5
        assert len(store.list_projects()) == 1 and len(store.list_presets()) == 2
