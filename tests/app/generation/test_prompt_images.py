"""Images in the prompt: content parts for the model (images in the order attached, then the
wrapped files and the text), plain strings for every message without images, and a branch whose
image file is gone refused by the image's name without reaching the model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from PySide6.QtCore import QObject, Signal

from app.generation.attachments import with_attachments
from app.generation.prompt_messages import missing_image, prompt_messages
from app.generation.reply_generation import ReplyGeneration
from app.generation.variant_generation import VariantGeneration
from app.generation.worker import GenerationRequest
from app.store.conversations import Store
from tests.pictures import picture_bytes

NOTES = {"name": "notes.md", "size": 5, "tokens": 2, "text": "hello"}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "conversations.sqlite3") as store:
        yield store


def _two_images(store: Store) -> tuple[int, list[str]]:
    chat = store.create_conversation("Pets", system_prompt="Be kind.")
    cat = store.images.add_bytes(picture_bytes(colour=1), "cat.png")
    dog = store.images.add_bytes(picture_bytes(colour=2), "dog.png")
    records = [dog.as_record(9), NOTES, cat.as_record(9)]
    first = store.append_message(chat.id, None, "user", "Plain first")
    reply = store.append_message(chat.id, first.id, "assistant", "Hi")
    store.append_message(chat.id, reply.id, "user", "Which is which?", attachments=records)
    paths = [str(store.images.path(image.sha256)) for image in (dog, cat)]
    return chat.id, paths


def test_images_come_first_in_their_order_then_one_text_part(store: Store) -> None:
    cid, paths = _two_images(store)
    messages = prompt_messages(store, cid, store.active_path(cid))
    assert messages[:3] == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "Plain first"},  # no images: a string, as always
        {"role": "assistant", "content": "Hi"},
    ]
    assert messages[3] == {
        "role": "user",
        "content": [
            {"type": "image", "image": paths[0]},
            {"type": "image", "image": paths[1]},
            {"type": "text", "text": with_attachments("Which is which?", [NOTES])},
        ],
    }
    assert "Attached file: notes.md" in messages[3]["content"][2]["text"]


def test_a_detail_setting_reaches_every_image_part(store: Store) -> None:
    cid, _ = _two_images(store)
    parts = prompt_messages(store, cid, store.active_path(cid), detail=448)[3]["content"]
    assert [p.get("detail") for p in parts] == [448, 448, None]


def test_a_missing_image_leaves_the_history_readable_and_names_itself(store: Store) -> None:
    cid, paths = _two_images(store)
    Path(paths[1]).unlink()
    path = store.active_path(cid)
    assert [m.content for m in path] == ["Plain first", "Hi", "Which is which?"]
    assert len(prompt_messages(store, cid, path)) == 4
    assert "cat.png is missing" in (missing_image(store, path) or "")
    assert missing_image(store, path[:2]) is None


class _Backend(QObject):
    tokensReady = Signal(object)
    prefillProgress = Signal(object)
    generationFinished = Signal(object)
    generationFailed = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[GenerationRequest] = []

    def submit(self, request: GenerationRequest) -> None:
        self.requests.append(request)

    def cancel(self, request_id: int | None = None) -> None:
        pass


def test_continuing_a_branch_whose_image_is_gone_fails_with_its_name(qtbot, store: Store) -> None:
    cid, paths = _two_images(store)
    backend = _Backend()
    ids = iter(range(1, 100))
    generation = ReplyGeneration(store, [backend], lambda: "truncate_middle", lambda: next(ids))
    user_id = store.active_path(cid)[-1].id
    Path(paths[0]).unlink()
    with qtbot.waitSignal(generation.notice) as told:
        reply_id = generation.start(cid, user_id, "tiny", backend)
    assert backend.requests == [] and not generation.is_busy()
    reply = store.get_message(reply_id)
    assert reply.status == "error" and "dog.png is missing" in (reply.error or "")
    assert "dog.png is missing" in told.args[0]
    # The other branch, without the image, still answers.
    generation.start(cid, store.active_path(cid)[0].id, "tiny", backend)
    assert len(backend.requests) == 1


class _Worker:
    """What Regenerate ×N asks of the worker: its relay, and calls (recorded, never run)."""

    def __init__(self) -> None:
        self.relay = SimpleNamespace(wrap=lambda callback: callback)
        self.calls: list[object] = []

    def call(self, fn: object, **_: object) -> None:
        self.calls.append(fn)


def test_versions_side_by_side_on_a_branch_whose_image_is_gone_fail_naming_it(
    qtbot, store: Store
) -> None:
    cid, paths = _two_images(store)
    user_id = store.active_path(cid)[-1].id
    reply = store.append_message(cid, user_id, "assistant", "A dog and a cat.")
    Path(paths[1]).unlink()
    worker = _Worker()
    variants = VariantGeneration(store, worker)  # type: ignore[arg-type]
    with qtbot.waitSignal(variants.notice) as told:
        variants.start(cid, user_id, "tiny", 2)
    assert worker.calls == [] and not variants.is_busy()
    assert "cat.png is missing" in told.args[0]
    versions, _ = store.siblings(reply.id)
    assert [v.status for v in versions] == ["complete", "error", "error"]
    assert all("cat.png is missing" in (v.error or "") for v in versions[1:])
