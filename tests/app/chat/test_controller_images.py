"""Images through the controller, the real worker and tiny models: an attached or pasted image
is kept and counted, sent with the message (the reply is the engine's own for that prompt),
kept by an edit, and a branch whose image file is gone fails with the image's name; a
text-only model refuses images in its own words."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.chat.controller import ChatController
from app.generation.prompt_messages import prompt_messages
from app.generation.worker import InferenceWorker
from app.generation.worker_engine import default_engine_factory
from app.generation.worker_generation import sampling_params
from app.settings import Preferences
from app.store.conversations import Store
from tests.tiny_models import NO_EOS
from tests.tiny_vision import png_bytes

GREEDY = {"temperature": 0.0, "max_tokens": 6, "seed": 0, "logit_bias": NO_EOS}


@pytest.fixture
def make_controller(qtbot, tmp_path: Path) -> Iterator:
    made: list[ChatController] = []

    def make(model: Path) -> ChatController:
        folder = tmp_path / f"data{len(made)}"
        store = Store.open(folder / "chat.sqlite3")
        worker = InferenceWorker()
        ctl = ChatController(store, worker, Preferences(folder / "settings.ini"), lambda _: model)
        with qtbot.waitSignal(worker.modelLoaded, timeout=60000):
            ctl.start()
        made.append(ctl)
        return ctl

    yield make
    for ctl in made:
        ctl.shutdown()


def _attach(qtbot, ctl: ChatController, cid: int, **image: object) -> dict:
    with qtbot.waitSignal(ctl.attachmentReady, timeout=30000) as ready:
        ctl.counts.attach_image(cid, **image)  # type: ignore[arg-type]
    assert ready.args[0]["conversation_id"] == cid
    return ready.args[0]["attachment"]


def test_an_image_is_kept_counted_sent_and_kept_by_an_edit(
    qtbot, make_controller, tmp_path: Path, tiny_vision_dir: Path
) -> None:
    model = tiny_vision_dir / "smolvlm"
    ctl = make_controller(model)
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=GREEDY)
    photo = tmp_path / "photo.png"
    photo.write_bytes(png_bytes(40, 30, 1))
    attached = _attach(qtbot, ctl, cid, path=str(photo))
    pasted = _attach(qtbot, ctl, cid, data=png_bytes(90, 64, 3), name="pasted.png")
    assert (attached["kind"], attached["name"], attached["width"]) == ("image", "photo.png", 40)
    assert attached["tokens"] > 0 and pasted["name"] == "pasted.png"
    photo.unlink()  # kept in the image store: the original file is no longer needed

    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000):
        assert ctl.send(cid, "What are these?", [attached, pasted])
    user, reply = ctl.store.active_path(cid)
    assert list(user.attachments) == [attached, pasted] and reply.status == "complete"
    engine, _ = default_engine_factory(model, lambda *_: None)
    own = engine.generate(prompt_messages(ctl.store, cid, [user]), sampling_params(reply.params))
    assert reply.content == own.text != ""

    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000):
        assert ctl.edit(user.id, "Describe them")
    edited = ctl.store.active_path(cid)[0]
    assert edited.id != user.id and list(edited.attachments) == [attached, pasted]


def test_a_branch_whose_image_is_gone_fails_naming_it(
    qtbot, make_controller, tiny_vision_dir: Path
) -> None:
    ctl = make_controller(tiny_vision_dir / "smolvlm")
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=GREEDY)
    image = _attach(qtbot, ctl, cid, data=png_bytes(40, 30, 2), name="cat.png")
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000):
        assert ctl.send(cid, "What is it?", [image])
    ctl.store.images.path(image["sha256"]).unlink()
    first_reply = ctl.store.active_path(cid)[-1]
    with qtbot.waitSignal(ctl.notice, timeout=5000) as told:
        ctl.regenerate(first_reply.id)
    assert "cat.png is missing" in told.args[0]
    failed = ctl.store.active_path(cid)[-1]
    assert failed.status == "error" and "cat.png" in (failed.error or "")
    assert ctl.store.get_message(first_reply.id).content == first_reply.content  # still readable


def test_a_text_only_model_refuses_an_image_in_its_own_words(
    qtbot, make_controller, tiny_models_dir: Path
) -> None:
    ctl = make_controller(tiny_models_dir / "llama")
    cid = ctl.new_conversation()
    with qtbot.waitSignal(ctl.notice, timeout=30000) as told:
        ctl.counts.attach_image(cid, data=png_bytes(40, 30, 2), name="cat.png")
    assert told.args[0] == "llama cannot see images: it is a text-only model."
