"""A reply about a picture, on the tiny SmolVLM through the real worker: its replay sends the
picture again (from the image store, as the reply's own prompt did) and is identical; with the
picture's file gone it says so and cannot run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.generation.reply_generation import ReplyGeneration
from app.generation.worker import InferenceWorker
from app.replay.plan import ReplayError, plan_replay
from app.replay.run import run_replay
from app.store.conversations import Store
from tests.pictures import picture_bytes
from tests.tiny_models import NO_EOS

PARAMS = {"temperature": 0.7, "max_tokens": 8, "logit_bias": NO_EOS, "speculation": "off"}


def test_a_reply_about_a_picture_replays_with_the_picture(
    qtbot, tmp_path: Path, tiny_vision_dir: Path
) -> None:
    model = Path(shutil.copytree(tiny_vision_dir / "smolvlm", tmp_path / "library" / "smolvlm"))
    worker = InferenceWorker()
    try:
        with qtbot.waitSignal(worker.modelLoaded, timeout=60000):
            worker.load_model(model)
        with Store.open(tmp_path / "data" / "conversations.sqlite3") as store:
            chat = store.create_conversation("Picture", params=PARAMS)
            image = store.images.add_bytes(picture_bytes(colour=3), "cat.png")
            question = store.append_message(
                chat.id, None, "user", "What is this?", attachments=[image.as_record(9)]
            )
            replies = ReplyGeneration(
                store, [worker], lambda: "truncate_middle", worker.next_request_id
            )
            with qtbot.waitSignal(replies.ended, timeout=60000):
                reply_id = replies.start(chat.id, question.id, "smolvlm", worker)
            reply = store.get_message(reply_id)
            assert reply.status == "complete" and reply.provenance["seed_drawn"] is True

            plan = plan_replay(store, reply_id)
            parts = plan.messages[-1]["content"]
            assert parts[0] == {"type": "image", "image": str(store.images.path(image.sha256))}
            outcome = run_replay(plan)
            assert outcome.identical, outcome.summary()

            store.images.path(image.sha256).unlink()
            with pytest.raises(ReplayError, match=r"cat\.png is missing"):
                plan_replay(store, reply_id)
    finally:
        worker.shutdown()


def test_a_reply_at_an_image_detail_replays_at_that_detail(
    qtbot, tmp_path: Path, tiny_vision_dir: Path
) -> None:
    from tests.tiny_vision import png_bytes, widen_pixel_budget

    model = widen_pixel_budget(
        Path(shutil.copytree(tiny_vision_dir / "qwen2_5_vl", tmp_path / "library" / "qwen"))
    )
    worker = InferenceWorker()
    try:
        with qtbot.waitSignal(worker.modelLoaded, timeout=60000):
            worker.load_model(model)
        with Store.open(tmp_path / "data" / "conversations.sqlite3") as store:
            chat = store.create_conversation("Picture", params=PARAMS)
            image = store.images.add_bytes(png_bytes(1000, 750, 3), "chart.png")
            question = store.append_message(
                chat.id, None, "user", "What is this?", attachments=[image.as_record(9)]
            )
            replies = ReplyGeneration(
                store,
                [worker],
                lambda: "truncate_middle",
                worker.next_request_id,
                detail_for=lambda _: 512,
            )
            with qtbot.waitSignal(replies.ended, timeout=60000):
                reply_id = replies.start(chat.id, question.id, "qwen", worker)
            reply = store.get_message(reply_id)
            assert reply.provenance["image_detail"] == 512
            plan = plan_replay(store, reply_id)
            assert plan.messages[-1]["content"][0]["detail"] == 512  # as the reply was asked
            outcome = run_replay(plan)
            assert outcome.identical, outcome.summary()
    finally:
        worker.shutdown()
