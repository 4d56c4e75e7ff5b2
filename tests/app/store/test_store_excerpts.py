"""Knowledge excerpts on a user message: kept once, before anything answers it, never carried to
an edit's new version, refused when malformed; rendered ahead of the person's files and text in
one numbered wrapper; and carried by a conversation's export, the archive of all of them and
their import, so the turn renders after a round trip exactly as it did."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.generation.knowledge_block import INTRO, excerpts_of
from app.generation.prompt_messages import prompt_messages
from app.importers import run
from app.importers.archive import write_archive
from app.knowledge.excerpts import Excerpt
from app.store.conversations import InvalidInputError, Store

GUIDE = Excerpt(
    "Manuals",
    "/home/me/Manuals/guide.pdf",
    3,
    "Installing",
    120,
    180,
    "Run ```make``` first.",
    0.9,
    "a" * 64,
)
NOTES = Excerpt("Notes", "/home/me/notes.md", None, "", 0, 11, "Short note.", 0.5, "b" * 64, True)
FILE = {"name": "todo.txt", "size": 4, "tokens": 2, "text": "milk"}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "here" / "conversations.sqlite3") as store:
        yield store


def _turn(store: Store) -> tuple[int, int]:
    chat = store.create_conversation("Docs", system_prompt="Be brief.")
    user = store.append_message(chat.id, None, "user", "How do I install it?", attachments=[FILE])
    store.add_excerpts(user.id, [GUIDE.as_record(), NOTES.as_record()])
    store.append_message(chat.id, user.id, "assistant", "Run make [1].")
    return chat.id, user.id


def test_the_turn_renders_its_excerpts_ahead_of_its_files_and_text(store: Store) -> None:
    cid, user_id = _turn(store)
    messages = prompt_messages(store, cid, store.active_path(cid))
    assert messages[0] == {"role": "system", "content": "Be brief."}  # never in the system prompt
    content = messages[1]["content"]
    assert content.startswith(INTRO)
    first = "[1] Collection: Manuals · File: guide.pdf · Page: 3 · Section: Installing"
    assert f"{first}\n````\nRun ```make``` first.\n````" in content  # a fence it cannot close
    assert "[2] Collection: Notes · File: notes.md · (the whole file)\n```\nShort note.\n```" in (
        content
    )
    assert "/home/me" not in content  # the model reads file names, not where they lie
    assert content.index("[2]") < content.index("Attached file: todo.txt")
    assert content.endswith("How do I install it?")
    assert excerpts_of(store.get_message(user_id).attachments) == [GUIDE, NOTES]


def test_kept_once_before_a_reply_and_never_carried_to_an_edit(store: Store) -> None:
    cid, user_id = _turn(store)
    with pytest.raises(InvalidInputError, match="has its knowledge excerpts already"):
        store.add_excerpts(user_id, [NOTES.as_record()])
    lone = store.append_message(cid, None, "user", "Another question")
    store.append_message(cid, lone.id, "assistant", "An answer")
    with pytest.raises(InvalidInputError, match="has been answered"):
        store.add_excerpts(lone.id, [NOTES.as_record()])
    reply = store.active_path(cid)[-1]
    with pytest.raises(InvalidInputError, match="belong to a message of the person"):
        store.add_excerpts(reply.id, [NOTES.as_record()])
    bad = {**GUIDE.as_record(), "page": "three"}
    with pytest.raises(InvalidInputError, match="knowledge excerpt"):
        store.append_message(cid, None, "user", "x", attachments=[bad])
    with pytest.raises(InvalidInputError, match="fields a knowledge excerpt does not"):
        store.append_message(cid, None, "user", "x", attachments=[{**bad, "page": 3, "url": "x"}])
    edited = store.edit_message(user_id, "How do I build it?")
    assert list(edited.attachments) == [FILE]  # its files, none of the old excerpts
    assert store.get_message(user_id).attachments[1:] == (GUIDE.as_record(), NOTES.as_record())


def test_export_archive_and_import_carry_the_excerpts(store: Store, tmp_path: Path) -> None:
    cid, _user_id = _turn(store)
    before = prompt_messages(store, cid, store.active_path(cid))
    data = json.loads(json.dumps(store.export_json(cid)))
    archive = tmp_path / "all.json"
    assert write_archive(store, archive) == 1
    markdown = store.export_markdown(cid)
    assert "<summary>Source [1]: /home/me/Manuals/guide.pdf, page 3 (Manuals)" in markdown
    for source, how in ((data, "json"), (archive, "archive")):
        with Store.open(tmp_path / how / "conversations.sqlite3") as other:
            if how == "json":
                copied = other.import_json(source).id
            else:
                (copied,) = run.import_paths([Path(str(source))], other).written()
            after = prompt_messages(other, copied, other.active_path(copied))
            assert after == before, how
            user = other.active_path(copied)[0]
            assert excerpts_of(user.attachments) == [GUIDE, NOTES]
