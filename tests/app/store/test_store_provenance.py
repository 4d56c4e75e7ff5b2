"""A reply's provenance is stored with it and travels: the conversation export and import, the
archive and `branchwise import` restore it as it was; a fork keeps it; a reply imported from
another app keeps the model its source named and says where it came from; an older database
gains the column empty."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.importers import run
from app.importers.archive import write_archive
from app.store.conversations import Store
from app.store.records import InvalidInputError
from tests.app.importers.helpers import write_json
from tests.app.importers.samples import chatgpt_conversation
from tests.app.store.test_store_compaction import without_summaries

ORIGIN = {
    "model": {
        "name": "llama",
        "path": "/models/llama",
        "weights_digest": "ab" * 16,
        "form": "float32 (from 4-bit)",
    },
    "template_digest": "cd" * 16,
    "sampling": {"temperature": 0.7, "top_p": 0.95, "seed": 1234, "stop": [], "logit_bias": {}},
    "seed": 1234,
    "seed_drawn": True,
    "speculation": "prompt_lookup",
    "draft_model": None,
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}],
    "template_kwargs": {"enable_thinking": False},
    "context_length": 4096,
    "context_limit": None,
    "overflow": "rolling",
    "versions": {"branchwise": "0.1.0", "mlx": "0.32.4", "mlx_lm": "0.32.2"},
    "prompt_digest": "ef" * 16,
    "continued": None,
    "token_ids": [5, 17, 2],
}


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "data" / "conversations.sqlite3") as opened:
        yield opened


def _chat_with_reply(store: Store) -> tuple[int, int]:
    cid = store.create_conversation("Provenance").id
    question = store.append_message(cid, None, "user", "Hello?")
    reply = store.begin_reply(cid, question.id, "llama", {"temperature": 0.7})
    store.finish_reply(reply.id, "Hi.", stats={"generated_tokens": 3}, provenance=ORIGIN)
    return cid, reply.id


def test_a_reply_keeps_its_provenance(store: Store) -> None:
    _, reply_id = _chat_with_reply(store)
    assert store.get_message(reply_id).provenance == ORIGIN


def test_provenance_that_would_not_load_back_is_refused(store: Store) -> None:
    cid = store.create_conversation("Bad").id
    question = store.append_message(cid, None, "user", "Hello?")
    reply = store.begin_reply(cid, question.id)
    with pytest.raises(InvalidInputError, match="provenance"):
        store.finish_reply(reply.id, "Hi.", provenance={"token_ids": (1, 2)})


def test_the_export_and_import_restore_it(store: Store) -> None:
    cid, _ = _chat_with_reply(store)
    exported = store.export_json(cid)
    assert exported["version"] == 6
    copy = store.import_json(exported)
    assert store.active_path(copy.id)[-1].provenance == ORIGIN
    # A fork is the same reply: it keeps where it came from.
    forked = store.fork_conversation(store.active_path(copy.id)[-1].id)
    assert store.active_path(forked.id)[-1].provenance == ORIGIN


def test_an_export_without_provenance_still_reads(store: Store) -> None:
    cid, _ = _chat_with_reply(store)
    exported = store.export_json(cid)
    exported["version"] = 4
    for message in exported["messages"]:
        message.pop("provenance")
    copy = store.import_json(exported)
    assert store.active_path(copy.id)[-1].provenance == {}


def test_the_archive_carries_it_and_branchwise_import_restores_it(
    store: Store, tmp_path: Path
) -> None:
    _chat_with_reply(store)
    archive = tmp_path / "backup.json"
    assert write_archive(store, archive) == 1
    with Store.open(tmp_path / "restored" / "conversations.sqlite3") as restored:
        report = run.import_paths([archive], restored)
        cid = report.inputs[0].outcomes[0].conversation_id
        reply = restored.active_path(cid)[-1]
        assert reply.provenance == ORIGIN


def test_a_reply_from_another_app_says_where_it_came_from_and_its_model(
    store: Store, tmp_path: Path
) -> None:
    report = run.import_paths([write_json(tmp_path / "c.json", [chatgpt_conversation()])], store)
    cid = report.inputs[0].outcomes[0].conversation_id
    replies = [m for m in store.all_messages(cid) if m.role == "assistant"]
    assert replies and all(m.provenance["imported_from"] == "chatgpt" for m in replies)
    assert all(m.provenance["model"] == {"name": m.model_id} for m in replies)
    users = [m for m in store.all_messages(cid) if m.role == "user"]
    assert all(m.provenance == {} for m in users)


def test_an_older_database_gains_the_column_empty_after_a_backup(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with Store.open(path) as store:
        _, reply_id = _chat_with_reply(store)
    with sqlite3.connect(path) as conn:  # back to schema 5: no provenance column
        conn.execute("ALTER TABLE messages DROP COLUMN provenance")
        without_summaries(conn)
        conn.execute("PRAGMA user_version = 5")
    with Store.open(path) as store:
        assert store.get_message(reply_id).provenance == {}
        assert store.get_message(reply_id).content == "Hi."
    assert list(tmp_path.glob("*v5-backup*"))
