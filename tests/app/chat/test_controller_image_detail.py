"""A model's image detail (Preferences, per model) through the controller and the real worker:
the tokens an image's chip and the composer's meter count change with it, the prompt a reply
sends carries it, and the reply equals the engine's own for the same parts at that detail.
(The tiny Qwen2.5-VL with its pixel budget widened: `tests.tiny_vision.widen_pixel_budget`.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.chat.controller import ChatController
from app.chat.image_attach import ImageAttached
from app.generation.prompt_messages import prompt_messages
from app.generation.worker import InferenceWorker
from app.generation.worker_engine import default_engine_factory
from app.generation.worker_generation import sampling_params
from app.settings import Preferences
from app.store.conversations import Store
from tests.tiny_models import NO_EOS
from tests.tiny_vision import build_vision_model, png_bytes, widen_pixel_budget

GREEDY = {"temperature": 0.0, "max_tokens": 4, "seed": 0, "logit_bias": NO_EOS}


@pytest.fixture(scope="module")
def qwen_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("detail") / "qwen-vl"
    return widen_pixel_budget(build_vision_model("qwen2_5_vl", folder))


@pytest.fixture
def ctl(qtbot, tmp_path: Path, qwen_dir: Path) -> Iterator[ChatController]:
    store = Store.open(tmp_path / "chat.sqlite3")
    worker = InferenceWorker()
    made = ChatController(store, worker, Preferences(tmp_path / "settings.ini"), lambda _: qwen_dir)
    with qtbot.waitSignal(worker.modelLoaded, timeout=60000):
        made.start()
    yield made
    made.shutdown()


def _attach(qtbot, ctl: ChatController, cid: int, png: bytes) -> ImageAttached:
    with qtbot.waitSignal(ctl.imageReady, timeout=30000) as ready:
        ctl.counts.attach_image(cid, png, name="big.png")
    return ready.args[0]


def _draft_count(qtbot, ctl: ChatController, cid: int, record: dict) -> int:
    with qtbot.waitSignal(ctl.tokenCount, timeout=30000) as counted:
        ctl.counts.request_token_count(cid, "What is it?", [record])
    return counted.args[0].count


def test_the_detail_changes_the_tokens_counted_and_the_prompt_sent(
    qtbot, ctl: ChatController, qwen_dir: Path
) -> None:
    model_id = ctl.model_info.model_id
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=GREEDY)
    png = png_bytes(1000, 750, 5)
    own = _attach(qtbot, ctl, cid, png)
    own_draft = _draft_count(qtbot, ctl, cid, own.record)

    ctl.preferences.set_image_detail_for(model_id, 512)
    assert ctl.image_detail() == 512 and ctl.image_detail("remote:x/y") is None
    with qtbot.waitSignal(ctl.imageReady, timeout=30000) as recounted:
        ctl.counts.recount_images(cid, [own.image])
    capped = recounted.args[0]
    assert capped.image.sha256 == own.image.sha256  # the same picture, shown smaller
    assert 0 < capped.tokens < own.tokens / 2, (capped.tokens, own.tokens)
    capped_draft = _draft_count(qtbot, ctl, cid, capped.record)
    assert own_draft - capped_draft == own.tokens - capped.tokens

    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=60000):
        assert ctl.send(cid, "What is it?", [capped.record])
    user, reply = ctl.store.active_path(cid)
    assert reply.status == "complete"
    sent = prompt_messages(ctl.store, cid, [user], detail=512)
    assert sent[0]["content"][0]["detail"] == 512
    engine, _ = default_engine_factory(qwen_dir, lambda *_: None)
    assert reply.stats["prompt_tokens"] == engine.count_prompt_tokens(sent)
    assert engine.count_prompt_tokens(sent) < engine.count_prompt_tokens(
        prompt_messages(ctl.store, cid, [user])
    )
    assert reply.content == engine.generate(sent, sampling_params(reply.params)).text != ""

    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=60000):
        assert ctl.regenerate(reply.id)
    again = ctl.store.active_path(cid)[-1]
    assert again.id != reply.id and again.content == reply.content
    assert again.stats["prompt_tokens"] == reply.stats["prompt_tokens"]

    # Regenerate ×N sends the same parts at the same detail: one prefill, the same prompt.
    with qtbot.waitSignal(ctl.variants.ended, timeout=60000):
        assert ctl.regenerate_variants(reply.id, 2)
    versions = [m for m in ctl.store.all_messages(cid) if m.parent_id == user.id]
    newest = sorted(versions, key=lambda m: m.id)[-2:]
    assert [m.status for m in newest] == ["complete", "complete"]
    assert {m.stats.get("prompt_tokens") for m in newest} == {reply.stats["prompt_tokens"]}
