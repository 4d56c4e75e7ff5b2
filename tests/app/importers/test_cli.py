"""`branchwise import` and `branchwise export` as a script uses them: the report, the exit
code, JSON output, a dry run that changes nothing, a backup that restores every conversation
whole, and no harm to the reply a running app is writing meanwhile."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from app.importers.cli import main
from app.mcp.cli import main as tools_main
from app.store import schema as store_schema
from app.store.conversations import Store
from tests.app.importers.helpers import write_json
from tests.app.importers.samples import chatgpt_conversation, claude_conversation


def _export(tmp_path: Path) -> Path:
    return write_json(
        tmp_path / "conversations.json",
        [chatgpt_conversation(), {"id": "folder", "name": "Projects"}],
    )


def test_import_prints_a_line_per_conversation_and_succeeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "data")
    assert main(["import", str(_export(tmp_path)), "--data-dir", data]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "imported   Greetings (7 messages)"
    assert out[1].startswith("REFUSED    Projects: conversations.json, entry 2 is not a")
    assert out[2] == (
        "Imported: 1 new, 0 updated (7 new messages in all), 0 unchanged, 0 skipped, 1 refused."
    )
    assert main(["import", str(_export(tmp_path)), "--data-dir", data]) == 0  # unchanged: fine
    assert capsys.readouterr().out.startswith("unchanged  Greetings")


def test_json_report_and_dry_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    assert (
        main(["import", str(_export(tmp_path)), "--data-dir", str(data), "--dry-run", "--json"])
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["dry_run"] is True and report["batch_id"] is None
    assert report["counts"]["imported"] == 1 and report["counts"]["refused"] == 1
    first = report["inputs"][0]["conversations"][0]
    assert (first["status"], first["new_messages"], first["source_id"]) == ("imported", 7, "conv-1")
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
    assert main(["import", str(_export(tmp_path)), str(tmp_path / "gone"), "--data-dir", data]) == 1
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
        tree = [
            (m.role, m.content, m.reasoning, m.trace, m.model_id, m.created_at)
            for m in store.all_messages(c.id)
        ]
        result.append((c.title, c.system_prompt, c.pinned, c.created_at, path, tree))
    return result


def test_a_dry_run_on_an_existing_store_plans_against_it_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    assert main(["import", str(_export(tmp_path)), "--data-dir", str(data)]) == 0
    capsys.readouterr()
    database = data / "conversations.sqlite3"
    with closing(sqlite3.connect(database)) as conn:  # settle the WAL into the file
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = {p.name: p.read_bytes() for p in data.iterdir() if p.is_file()}
    # A newer Branchwise with one more schema step: a real open would migrate (and back up).
    monkeypatch.setattr(
        store_schema,
        "MIGRATIONS",
        (*store_schema.MIGRATIONS, "ALTER TABLE conversations ADD COLUMN x;"),
    )
    assert main(["import", str(_export(tmp_path)), "--data-dir", str(data), "--dry-run"]) == 0
    assert capsys.readouterr().out.startswith("unchanged  Greetings")  # planned against it
    assert {p.name: p.read_bytes() for p in data.iterdir() if p.is_file()} == before


@pytest.mark.parametrize("command", ["import", "export", "tools"])
def test_a_command_beside_the_running_app_leaves_the_reply_it_is_writing_alone(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    app = Store.open(data / "conversations.sqlite3")  # the app, streaming a reply
    chat = app.create_conversation("Live")
    question = app.append_message(chat.id, None, "user", "Tell me about cats")
    writer = app.reply_writer(app.begin_reply(chat.id, question.id, "m").id, interval_s=0)
    writer.append("Cats are ")
    if command == "import":
        assert main(["import", str(_export(tmp_path)), "--data-dir", str(data)]) == 0
    elif command == "export":
        assert main(["export", "--data-dir", str(data), "--out", str(tmp_path / "a.json")]) == 0
    else:
        assert (
            tools_main(
                [
                    "call",
                    "branchwise",
                    "search_conversations",
                    "--args",
                    json.dumps({"query": "cats"}),
                    "--data-dir",
                    str(data),
                ]
            )
            == 0
        )
    writer.append("small carnivores.")  # the app writes on: the reply is still its own
    writer.finish("complete")
    reply = app.get_message(writer.message_id)
    assert (reply.content, reply.status) == ("Cats are small carnivores.", "complete")
    app.close()
