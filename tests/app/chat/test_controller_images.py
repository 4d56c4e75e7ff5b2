"""Images through the controller, the real worker and tiny models: an attached or pasted image
is kept and counted (for the draft, or for the editor that asked), sent with the message (the
reply is the engine's own for that prompt), sent again by Regenerate, kept or replaced by an
edit, and a branch whose image file is gone fails with the image's name; a text-only model
keeps the image (its chip says it cannot see it) but refuses the message, saying why."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.chat.controller import ChatController
from app.chat.image_attach import ImageAttached, model_sight
from app.generation.prompt_messages import prompt_messages
from app.generation.worker import InferenceWorker
from app.generation.worker_engine import default_engine_factory
from app.generation.worker_events import ModelLoaded
from app.generation.worker_generation import sampling_params
from app.settings import Preferences
from app.store.conversations import Store
from tests.tiny_models import NO_EOS
from tests.tiny_vision import png_bytes

GREEDY = {"temperature": 0.0, "max_tokens": 6, "seed": 0, "logit_bias": NO_EOS}


@pytest.fixture
def make_controller(qtbot, tmp_path: Path) -> Iterator[Callable[[Path], ChatController]]:
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


def _attach(qtbot, ctl: ChatController, cid: int, source: str | bytes, **kw: Any) -> ImageAttached:
    with qtbot.waitSignal(ctl.imageReady, timeout=30000) as ready:
        ctl.counts.attach_image(cid, source, **kw)
    attached = ready.args[0]
    assert attached.conversation_id == cid
    return attached


def _finished(qtbot, ctl: ChatController, action: Callable[[], bool]) -> None:
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000):
        assert action()


def test_model_sight_says_who_cannot_see_and_why() -> None:
    assert model_sight(None).sees and model_sight(ModelLoaded("m", "m", None, vision=True)).sees
    blind = model_sight(
        ModelLoaded(
            "SmolLM2", "SmolLM2", None, vision=False, text_only_reason="No image processor."
        )
    )
    assert blind.blind == "SmolLM2 can't see images"
    assert blind.refusal.startswith("SmolLM2 can't see images: it is a text-only model. No image")


def test_an_image_is_kept_counted_sent_regenerated_and_edited(
    qtbot, make_controller, tmp_path: Path, tiny_vision_dir: Path
) -> None:
    model = tiny_vision_dir / "smolvlm"
    ctl = make_controller(model)
    assert ctl.model_info.vision is True
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=GREEDY)
    photo = tmp_path / "photo.png"
    photo.write_bytes(png_bytes(40, 30, 1))
    attached = _attach(qtbot, ctl, cid, str(photo)).record
    pasted = _attach(qtbot, ctl, cid, png_bytes(90, 64, 3), name="pasted.png").record
    assert (attached["kind"], attached["name"], attached["width"]) == ("image", "photo.png", 40)
    assert attached["tokens"] > 0 and pasted["name"] == "pasted.png"
    for_editor = _attach(qtbot, ctl, cid, png_bytes(20, 20, 4), for_message=7)
    assert for_editor.for_message == 7 and for_editor.image.name == "Pasted image.png"
    photo.unlink()  # kept in the image store: the original file is no longer needed

    _finished(qtbot, ctl, lambda: ctl.send(cid, "What are these?", [attached, pasted]))
    user, reply = ctl.store.active_path(cid)
    assert list(user.attachments) == [attached, pasted] and reply.status == "complete"
    engine, _ = default_engine_factory(model, lambda *_: None)
    own = engine.generate(prompt_messages(ctl.store, cid, [user]), sampling_params(reply.params))
    assert reply.content == own.text != ""
    _finished(qtbot, ctl, lambda: ctl.regenerate(reply.id))
    again = ctl.store.active_path(cid)[-1]
    assert again.id != reply.id and again.content == reply.content  # the same images, greedy

    _finished(qtbot, ctl, lambda: ctl.edit(user.id, "Describe them"))
    edited = ctl.store.active_path(cid)[0]
    assert edited.id != user.id and list(edited.attachments) == [attached, pasted]
    _finished(qtbot, ctl, lambda: ctl.edit(edited.id, "And this?", [for_editor.record]))
    assert list(ctl.store.active_path(cid)[0].attachments) == [for_editor.record]


def test_a_branch_whose_image_is_gone_fails_naming_it(
    qtbot, make_controller, tiny_vision_dir: Path
) -> None:
    ctl = make_controller(tiny_vision_dir / "smolvlm")
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=GREEDY)
    image = _attach(qtbot, ctl, cid, png_bytes(40, 30, 2), name="cat.png").record
    _finished(qtbot, ctl, lambda: ctl.send(cid, "What is it?", [image]))
    ctl.store.images.path(image["sha256"]).unlink()
    first_reply = ctl.store.active_path(cid)[-1]
    with qtbot.waitSignal(ctl.notice, timeout=5000) as told:
        ctl.regenerate(first_reply.id)
    assert "cat.png is missing" in told.args[0]
    failed = ctl.store.active_path(cid)[-1]
    assert failed.status == "error" and "cat.png" in (failed.error or "")
    assert ctl.store.get_message(first_reply.id).content == first_reply.content  # still readable


def test_a_text_only_model_keeps_the_image_but_refuses_the_message(
    qtbot, make_controller, tiny_models_dir: Path
) -> None:
    ctl = make_controller(tiny_models_dir / "llama")
    assert ctl.model_info.vision is False
    cid = ctl.new_conversation()
    attached = _attach(qtbot, ctl, cid, png_bytes(16, 16, 3), name="cat.png")
    assert attached.tokens == 0  # not counted: this model cannot read it
    with qtbot.waitSignal(ctl.notice) as told:
        assert not ctl.send(cid, "What is this?", [attached.record])
    assert told.args[0].startswith("llama can't see images: it is a text-only model.")
    assert ctl.store.active_path(cid) == []


def test_a_picture_alone_is_a_message_but_nothing_at_all_is_not(
    qtbot, make_controller, tiny_vision_dir: Path
) -> None:
    ctl = make_controller(tiny_vision_dir / "smolvlm")
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=GREEDY)
    image = _attach(qtbot, ctl, cid, png_bytes(40, 30, 2), name="cat.png").record
    _finished(qtbot, ctl, lambda: ctl.send(cid, "", [image]))
    user, reply = ctl.store.active_path(cid)
    assert (user.content, list(user.attachments)) == ("", [image])
    assert reply.status == "complete"
    _finished(qtbot, ctl, lambda: ctl.edit(user.id, "  "))  # still the picture: a new version
    assert ctl.store.active_path(cid)[0].id != user.id
    with qtbot.waitSignal(ctl.notice, timeout=5000) as told:
        assert not ctl.send(cid, "   ", [])
    assert told.args[0] == "Type a message first."
    with qtbot.waitSignal(ctl.notice, timeout=5000) as told:
        assert not ctl.edit(user.id, "", [])
    assert told.args[0] == "An edited message cannot be empty."
