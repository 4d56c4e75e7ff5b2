"""Images through export and import: the bytes travel in the export file (never in SQLite),
come back into another data folder's image store checked against their digest, and other apps'
exports keep the images whose bytes they hold."""

from __future__ import annotations

import base64
import copy
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.generation.prompt_messages import missing_image
from app.importers import run, writer
from app.importers.cli import main
from app.store.conversations import InvalidInputError, Store
from tests.app.importers.helpers import write_json, write_jsonl
from tests.app.importers.samples import (
    chatgpt_conversation,
    jan_thread,
    lmstudio_conversation,
    openwebui_export,
)
from tests.pictures import picture_bytes


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "here" / "conversations.sqlite3") as store:
        yield store


def _chat(store: Store) -> tuple[int, dict]:
    chat = store.create_conversation("Pets")
    image = store.images.add_bytes(picture_bytes((64, 48), colour=3), "cat.png")
    record = image.as_record(81)
    user = store.append_message(chat.id, None, "user", "What is it?", attachments=[record])
    store.append_message(chat.id, user.id, "assistant", "A cat.")
    return chat.id, record


def test_an_export_carries_the_bytes_and_an_import_restores_them(
    store: Store, tmp_path: Path
) -> None:
    cid, record = _chat(store)
    data = json.loads(json.dumps(store.export_json(cid)))  # as written to a file
    original = store.images.path(record["sha256"]).read_bytes()
    assert base64.b64decode(data["images"][record["sha256"]]) == original
    with Store.open(tmp_path / "there" / "conversations.sqlite3") as other:
        copied = other.import_json(data)
        path = other.active_path(copied.id)
        assert list(path[0].attachments) == [record]
        assert other.images.path(record["sha256"]).read_bytes() == original
        assert missing_image(other, path) is None


def test_bytes_that_do_not_match_their_digest_refuse_the_import(
    store: Store, tmp_path: Path
) -> None:
    cid, record = _chat(store)
    data = store.export_json(cid)
    forged = copy.deepcopy(data)
    forged["images"][record["sha256"]] = base64.b64encode(picture_bytes(colour=9)).decode()
    broken = copy.deepcopy(data)
    broken["images"][record["sha256"]] = "not base64!"
    with Store.open(tmp_path / "there" / "conversations.sqlite3") as other:
        for bad in (forged, broken):
            with pytest.raises(InvalidInputError, match="images"):
                other.import_json(bad)
        assert other.list_conversations() == [] and not other.images.root.exists()


def test_an_image_gone_at_export_keeps_its_record_and_says_so(store: Store, tmp_path: Path) -> None:
    cid, record = _chat(store)
    store.images.path(record["sha256"]).unlink()
    data = store.export_json(cid)
    assert data["images"] == {}
    with Store.open(tmp_path / "there" / "conversations.sqlite3") as other:
        path = other.active_path(other.import_json(data).id)
        assert list(path[0].attachments) == [record]
        assert "cat.png is missing" in (missing_image(other, path) or "")


def test_markdown_names_each_image(store: Store) -> None:
    cid, _ = _chat(store)
    assert "*Image: cat.png (64×48, " in store.export_markdown(cid)


def test_the_archive_round_trip_carries_image_bytes(tmp_path: Path) -> None:
    with Store.open(tmp_path / "a" / "conversations.sqlite3") as store:
        _, record = _chat(store)
        original = store.images.path(record["sha256"]).read_bytes()
    archive = tmp_path / "backup.json"
    assert main(["export", "--data-dir", str(tmp_path / "a"), "--out", str(archive)]) == 0
    assert main(["import", str(archive), "--data-dir", str(tmp_path / "b")]) == 0
    with Store.open(tmp_path / "b" / "conversations.sqlite3") as restored:
        (chat,) = restored.list_conversations()
        attachments = restored.active_path(chat.id)[0].attachments
        assert [a["sha256"] for a in attachments] == [record["sha256"]]
        assert {k: attachments[0][k] for k in ("name", "width", "height", "tokens")} == {
            "name": "cat.png",
            "width": 64,
            "height": 48,
            "tokens": 81,
        }
        assert restored.images.path(record["sha256"]).read_bytes() == original


def _data_url(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


def test_open_webui_inline_images_become_images(tmp_path: Path, store: Store) -> None:
    export = openwebui_export()
    picture = picture_bytes((20, 10), colour=5)
    files = export[1]["chat"]["history"]["messages"]["u1"]["files"]
    files[0]["url"] = _data_url(picture)
    report = run.import_paths([write_json(tmp_path / "owui.json", export)], store)
    cid = next(o.conversation_id for o in report.inputs[0].outcomes if o.conversation_id)
    (u1,) = [m for m in store.all_messages(cid) if m.content == "Question?"]
    image, document = u1.attachments
    assert (image["kind"], image["width"], image["height"]) == ("image", 20, 10)
    assert store.images.path(image["sha256"]).read_bytes() == picture
    assert document["name"] == "doc.pdf" and document["missing"] is True  # a reference only


def test_jan_data_url_images_become_images_and_links_stay_missing(
    tmp_path: Path, store: Store
) -> None:
    thread, messages = jan_thread()
    picture = picture_bytes((12, 12), colour=6)
    messages[0]["content"] += [
        {"type": "image_url", "image_url": {"url": _data_url(picture)}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    ]
    folder = tmp_path / "jan" / "threads" / "jan-1"
    write_json(folder / "thread.json", thread)
    write_jsonl(folder / "messages.jsonl", messages)
    report = run.import_paths([tmp_path / "jan"], store)
    cid = report.inputs[0].outcomes[0].conversation_id
    assert cid is not None
    (u1,) = [m for m in store.all_messages(cid) if m.content == "Hello Jan"]
    inline, linked = u1.attachments
    assert inline["kind"] == "image" and store.images.exists(inline["sha256"])
    assert linked.get("kind") is None and linked["missing"] is True


def test_lm_studio_images_in_user_files_become_images(tmp_path: Path, store: Store) -> None:
    data = lmstudio_conversation()
    picture = picture_bytes((16, 16), colour=7)
    data["messages"][0]["versions"][0]["content"] += [
        {"type": "file", "identifier": "1754557798069 - 1.png", "name": "shot.png"},
        {"type": "file", "identifier": "not-there.png", "name": "gone.png"},
    ]
    root = tmp_path / ".lmstudio"
    write_json(root / "conversations" / "1754557798069.conversation.json", data)
    (root / "user-files").mkdir()
    (root / "user-files" / "1754557798069 - 1.png").write_bytes(picture)
    report = run.import_paths([root], store)
    cid = next(o.conversation_id for o in report.inputs[0].outcomes if o.conversation_id)
    (first,) = [m for m in store.all_messages(cid) if m.content == "Hi there"]
    shot, gone = first.attachments
    assert (shot["kind"], shot["name"]) == ("image", "shot.png")
    assert store.images.path(shot["sha256"]).read_bytes() == picture
    assert gone["name"] == "gone.png" and gone["missing"] is True


def test_chatgpt_image_assets_become_images(tmp_path: Path, store: Store) -> None:
    data = chatgpt_conversation()
    data["mapping"]["u2"]["message"]["content"] = {
        "content_type": "multimodal_text",
        "parts": [
            {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-X1"},
            "See",
        ],
    }
    folder = tmp_path / "export"
    write_json(folder / "conversations.json", [data])
    picture = picture_bytes((24, 12), kind="JPEG")
    (folder / "file-X1-cat.jpg").write_bytes(picture)
    report = run.import_paths([folder], store)
    cid = report.inputs[0].outcomes[0].conversation_id
    assert cid is not None
    (u2,) = [m for m in store.all_messages(cid) if m.content == "See"]
    (image,) = u2.attachments
    assert (image["kind"], image["format"], image["width"]) == ("image", "JPEG", 24)
    assert store.images.path(image["sha256"]).read_bytes() == picture


def test_undoing_an_import_removes_the_images_it_brought(tmp_path: Path, store: Store) -> None:
    export = openwebui_export()
    files = export[1]["chat"]["history"]["messages"]["u1"]["files"]
    files[0]["url"] = _data_url(picture_bytes((20, 10), colour=8))
    report = run.import_paths([write_json(tmp_path / "owui.json", export)], store)
    digests = store.referenced_images()
    assert len(digests) == 1 and report.batch_id is not None
    (kept,) = digests
    old = time.time() - 86400
    os.utime(store.images.path(kept), (old, old))
    writer.undo_batch(store, report.batch_id)
    assert store.referenced_images() == set() and not store.images.exists(kept)
