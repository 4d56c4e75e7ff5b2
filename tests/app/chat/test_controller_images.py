"""The controller's image paths with tiny real models: an image kept and counted for a draft
(or for an editor), a vision model answering a message with images, Regenerate and an edit that
replaces them; a text-only model keeping the image but refusing the message, saying why."""

from __future__ import annotations

from pathlib import Path

from app.chat.controller import ChatController
from app.chat.image_attach import ImageAttached, model_sight
from app.generation.worker import InferenceWorker
from app.settings import Preferences
from app.store.conversations import Store
from tests.tiny_models import NO_EOS
from tests.tiny_vision import build_vision_model, png_bytes

GREEDY = {"temperature": 0.0, "max_tokens": 4, "seed": 0, "logit_bias": NO_EOS}


def _controller(qtbot, folder: Path, model: Path) -> ChatController:
    store = Store.open(folder / "chat.sqlite3")
    worker = InferenceWorker()
    ctl = ChatController(store, worker, Preferences(folder / "settings.ini"), lambda _p: model)
    with qtbot.waitSignal(worker.modelLoaded, timeout=60000):
        ctl.start()
    qtbot.waitUntil(lambda: ctl.model_state == "ready", timeout=60000)
    return ctl


def _attach(qtbot, ctl: ChatController, cid: int, source: str | bytes, **kw) -> ImageAttached:
    with qtbot.waitSignal(ctl.imageReady, timeout=30000) as ready:
        ctl.counts.attach_image(cid, source, **kw)
    return ready.args[0]


def _finished(qtbot, ctl: ChatController, action) -> None:
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=60000):
        assert action()


def test_model_sight_says_who_cannot_see_and_why() -> None:
    assert model_sight(None).sees and model_sight({"model_id": "m", "vision": True}).sees
    blind = model_sight({"model_id": "SmolLM2", "vision": False,
                         "text_only_reason": "No image processor."})
    assert blind.blind == "SmolLM2 can't see images"
    assert blind.refusal.startswith("SmolLM2 can't see images: it is a text-only model. No image")


def test_a_vision_model_counts_answers_regenerates_and_edits_images(
    qtbot, tmp_path: Path
) -> None:
    model = build_vision_model("smolvlm", tmp_path / "smolvlm")
    picture = tmp_path / "a.png"
    picture.write_bytes(png_bytes(40, 30, seed=1))
    ctl = _controller(qtbot, tmp_path, model)
    try:
        assert ctl.model_info["vision"] is True
        cid = ctl.new_conversation()
        ctl.update_settings(cid, params=GREEDY)
        first = _attach(qtbot, ctl, cid, str(picture))
        assert first.conversation_id == cid and first.for_message is None
        assert first.tokens > 0 and first.record["kind"] == "image"
        assert ctl.store.images.exists(first.image.sha256)
        pasted = _attach(qtbot, ctl, cid, png_bytes(20, 20, seed=2), for_message=7)
        assert pasted.image.name == "Pasted image.png" and pasted.for_message == 7

        _finished(qtbot, ctl, lambda: ctl.send(cid, "Describe it.", [first.record]))
        user, reply = ctl.store.active_path(cid)
        assert reply.status == "complete" and user.attachments == (first.record,)
        _finished(qtbot, ctl, lambda: ctl.regenerate(reply.id))
        assert ctl.store.active_path(cid)[-1].status == "complete"

        _finished(qtbot, ctl, lambda: ctl.edit(user.id, "Describe it.", [pasted.record]))
        edited = ctl.store.active_path(cid)[0]
        assert edited.id != user.id and edited.attachments == (pasted.record,)
        _finished(qtbot, ctl, lambda: ctl.edit(edited.id, "Briefly."))  # images kept
        assert ctl.store.active_path(cid)[0].attachments == (pasted.record,)
    finally:
        ctl.shutdown()


def test_a_text_only_model_keeps_the_image_but_refuses_the_message(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    ctl = _controller(qtbot, tmp_path, llama_path)
    try:
        assert ctl.model_info["vision"] is False
        cid = ctl.new_conversation()
        attached = _attach(qtbot, ctl, cid, png_bytes(16, 16, seed=3))
        assert attached.tokens == 0  # not counted: this model cannot read it
        with qtbot.waitSignal(ctl.notice) as notice:
            assert not ctl.send(cid, "What is this?", [attached.record])
        assert notice.args[0].startswith(f"{ctl.model_info['model_id']} can't see images")
        assert ctl.store.active_path(cid) == []
    finally:
        ctl.shutdown()
