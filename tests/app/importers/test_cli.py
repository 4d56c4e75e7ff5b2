"""`branchwise import` and `branchwise export` as a script uses them: the report, the exit
code, JSON output, a dry run, and a backup that restores every conversation whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.importers.cli import main
from app.store.conversations import Store
from tests.app.importers.helpers import write_json
from tests.app.importers.samples import chatgpt_conversation, claude_conversation


def _export(tmp_path: Path) -> Path:
    return write_json(tmp_path / "conversations.json",
                      [chatgpt_conversation(), {"id": "folder", "name": "Projects"}])


def test_import_prints_a_line_per_conversation_and_succeeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "data")
    assert main(["import", str(_export(tmp_path)), "--data-dir", data]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "imported   Greetings (7 messages)"
    assert out[1].startswith("REFUSED    Projects: conversations.json, entry 2 is not a")
    assert out[2] == ("Imported: 1 new, 0 updated (7 new messages in all), 0 unchanged, "
                      "0 skipped, 1 refused.")
    assert main(["import", str(_export(tmp_path)), "--data-dir", data]) == 0  # unchanged: fine
    assert capsys.readouterr().out.startswith("unchanged  Greetings")


def test_json_report_and_dry_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    assert main(["import", str(_export(tmp_path)), "--data-dir", str(data), "--dry-run",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dry_run"] is True and report["batch_id"] is None
    assert report["counts"]["imported"] == 1 and report["counts"]["refused"] == 1
    first = report["inputs"][0]["conversations"][0]
    assert (first["status"], first["new_messages"], first["source_id"]) == (
        "imported", 7, "conv-1")
    assert not (data / "conversations.sqlite3").exists()


def test_exit_code_when_an_input_is_unreadable_or_wholly_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "data")
    refused = write_json(tmp_path / "bad.json", [{"mapping": {}, "title": "no id"}])
    assert main(["import", str(refused), "--data-dir", data]) == 1
    assert main(["import", str(tmp_path / "missing.zip"), "--data-dir", data]) == 1
    assert "does not exist" in capsys.readouterr().err
    # A readable input next to an unreadable one still imports.
    assert main(["import", str(_export(tmp_path)), str(tmp_path / "gone"), "--data-dir",
                 data]) == 1
    with Store.open(Path(data) / "conversations.sqlite3") as store:
        assert [c.title for c in store.list_conversations()] == ["Greetings"]


def test_export_then_import_restores_everything(tmp_path: Path) -> None:
    first = tmp_path / "first"
    claude = write_json(tmp_path / "claude" / "conversations.json", [claude_conversation()])
    assert main(["import", str(_export(tmp_path)), str(claude), "--data-dir", str(first)]) == 0
    with Store.open(first / "conversations.sqlite3") as store:
        own = store.create_conversation("Typed here", system_prompt="sys")
        store.append_message(own.id, None, "user", "hello \U0001f600")
        store.set_pinned(own.id, True)
        before = _snapshot(store)
    backup = tmp_path / "backup.json"
    assert main(["export", "--data-dir", str(first), "--out", str(backup)]) == 0
    assert json.loads(backup.read_text())["format"] == "branchwise-archive"
    second = tmp_path / "second"
    assert main(["import", str(backup), "--data-dir", str(second)]) == 0
    with Store.open(second / "conversations.sqlite3") as store:
        assert _snapshot(store) == before
    # The restored imports keep their source: the original export adds nothing now.
    assert main(["import", str(_export(tmp_path)), "--data-dir", str(second), "--json"]) == 0
    # And the backup itself, imported again, adds nothing either.
    assert main(["import", str(backup), "--data-dir", str(second)]) == 0
    with Store.open(second / "conversations.sqlite3") as store:
        assert _snapshot(store) == before


def _snapshot(store: Store) -> list:
    result = []
    for c in sorted(store.list_conversations(), key=lambda c: c.title):
        path = [m.content for m in store.active_path(c.id)]
        tree = [(m.role, m.content, m.reasoning, m.trace, m.model_id, m.created_at)
                for m in store.all_messages(c.id)]
        result.append((c.title, c.system_prompt, c.pinned, c.created_at, path, tree))
    return result
