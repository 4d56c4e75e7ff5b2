"""Images in the conversation tree: records beside text files, bytes kept once outside SQLite,
kept by edits, regenerations and forks, and collected once no message names them."""

from __future__ import annotations

import base64
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.images.store import StoredImage
from app.store.conversations import InvalidInputError, Store
from tests.pictures import picture_bytes

TEXT_FILE = {"name": "notes.md", "size": 5, "tokens": 2, "text": "hello"}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "conversations.sqlite3") as store:
        yield store


def _image(store: Store, colour: int = 0, name: str = "cat.png") -> StoredImage:
    return store.images.add_bytes(picture_bytes((64, 48), colour=colour), name)


def _age(store: Store, *images: StoredImage) -> None:
    """Past the collector's grace: as if attached long ago."""
    old = time.time() - 86400
    for image in images:
        os.utime(store.images.path(image.sha256), (old, old))


def test_images_sit_beside_text_files_and_only_their_digest_reaches_sqlite(
    store: Store, tmp_path: Path
) -> None:
    image = _image(store)
    chat = store.create_conversation("Pets")
    records = [image.as_record(81), TEXT_FILE]
    message = store.append_message(chat.id, None, "user", "What is this?", attachments=records)
    assert list(store.get_message(message.id).attachments) == records
    assert store.images.path(image.sha256).parent.parent == tmp_path / "images"
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("conversations.sqlite3*"))
    data = store.images.path(image.sha256).read_bytes()
    assert image.sha256.encode() in raw
    assert data[8:40] not in raw and base64.b64encode(data)[:40] not in raw


def test_the_same_image_on_two_branches_is_kept_once(store: Store) -> None:
    chat = store.create_conversation("Pets")
    first = store.append_message(
        chat.id, None, "user", "Describe", attachments=[_image(store).as_record(81)]
    )
    again = _image(store, name="again.png")
    second = store.append_message(
        chat.id, None, "user", "Name it", attachments=[again.as_record(81)]
    )
    digests = {a["sha256"] for m in (first, second) for a in m.attachments}
    assert len(digests) == 1
    assert len([p for p in store.images.root.rglob("*") if p.is_file()]) == 1


def test_edit_regenerate_and_fork_keep_the_images(store: Store) -> None:
    chat = store.create_conversation("Pets")
    records = [_image(store).as_record(81), _image(store, 1, "dog.png").as_record(81)]
    user = store.append_message(chat.id, None, "user", "Compare", attachments=records)
    reply = store.append_message(chat.id, user.id, "assistant", "A cat and a dog.")
    edited = store.edit_message(user.id, "Compare them")
    assert list(edited.attachments) == records
    replaced = store.edit_message(user.id, "Only the dog", attachments=records[1:])
    assert list(replaced.attachments) == records[1:]
    again = store.begin_reply(chat.id, user.id)
    assert store.path_to(again.id)[0].attachments == tuple(records)
    fork = store.fork_conversation(reply.id)
    assert list(store.active_path(fork.id)[0].attachments) == records


def test_a_bad_image_record_is_refused(store: Store) -> None:
    chat = store.create_conversation("Pets")
    record = _image(store).as_record(81)
    for bad in (
        {**record, "sha256": "../../etc/passwd"},
        {**record, "data": base64.b64encode(b"bytes").decode()},
        {k: v for k, v in record.items() if k != "width"},
        {**record, "width": "64"},
    ):
        with pytest.raises(InvalidInputError):
            store.append_message(chat.id, None, "user", "x", attachments=[bad])


def test_deleting_the_last_message_naming_an_image_removes_its_file(store: Store) -> None:
    chat = store.create_conversation("Pets")
    shared, own = _image(store), _image(store, 1, "dog.png")
    first = store.append_message(
        chat.id, None, "user", "one", attachments=[shared.as_record(1), own.as_record(1)]
    )
    second = store.append_message(chat.id, None, "user", "two", attachments=[shared.as_record(1)])
    _age(store, shared, own)
    store.delete_message(first.id)
    assert store.images.exists(shared.sha256)  # still on the other branch
    assert not store.images.exists(own.sha256)
    store.delete_message(second.id)
    assert not store.images.exists(shared.sha256)


def test_a_just_attached_image_survives_a_collection(store: Store) -> None:
    chat = store.create_conversation("Pets")
    sent = _image(store, 1, "dog.png")
    message = store.append_message(chat.id, None, "user", "hi", attachments=[sent.as_record(1)])
    _age(store, sent)
    pending = _image(store)  # in the composer, not sent yet
    store.delete_message(message.id)
    assert not store.images.exists(sent.sha256)
    assert store.images.exists(pending.sha256)


def test_a_deleted_conversation_keeps_its_images_until_the_purge(store: Store) -> None:
    chat = store.create_conversation("Pets")
    image = _image(store)
    store.append_message(chat.id, None, "user", "hi", attachments=[image.as_record(1)])
    _age(store, image)
    store.delete_conversation(chat.id)
    store.purge_deleted(older_than_s=3600)  # deleted just now: still undoable
    assert store.images.exists(image.sha256)
    store.restore_conversation(chat.id)
    store.delete_conversation(chat.id)
    assert store.purge_deleted() == 1
    assert not store.images.exists(image.sha256)
