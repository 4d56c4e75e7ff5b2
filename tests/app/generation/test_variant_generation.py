"""Regenerate ×N through the controller, the real worker and the tiny llama: N sibling replies,
each streamed into its own message with its own seed, each stoppable on its own."""

from __future__ import annotations

from pathlib import Path

from app.chat.controller import ChatController
from app.generation.sibling_replies import SiblingText
from tests.app.chat.test_controller import _conversation, _send_and_wait, _started_controller
from tests.tiny_models import NO_EOS

SAMPLED = {"temperature": 0.9, "top_p": 0.95, "max_tokens": 8, "seed": 40, "logit_bias": NO_EOS}


def test_three_variants_become_siblings_with_their_own_seeds(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    ctl: ChatController = _started_controller(qtbot, tmp_path, llama_path)
    try:
        cid = _conversation(ctl, SAMPLED)
        _send_and_wait(qtbot, ctl, cid, "Hello there")
        first = ctl.store.active_path(cid)[-1]
        updates: list[SiblingText] = []
        ctl.variants.replyUpdated.connect(updates.append)
        with qtbot.waitSignal(ctl.variants.ended, timeout=30000):
            assert ctl.regenerate_variants(first.id, 3)
            assert ctl.is_busy()
        siblings, _ = ctl.store.siblings(first.id)
        assert len(siblings) == 4
        variants = siblings[1:]
        assert [m.params["seed"] for m in variants] == [40, 41, 42]
        assert all(m.status == "complete" and m.stats["generated_tokens"] == 8 for m in variants)
        assert len({m.content for m in variants}) > 1
        assert {u.index for u in updates} == {0, 1, 2}
        # The variant with the conversation's own seed equals the first reply of that seed.
        assert variants[0].content == first.content
        # Keep the second: it becomes the active branch.
        assert ctl.variants.keep(1) == variants[1].id
        assert ctl.store.active_path(cid)[-1].id == variants[1].id
    finally:
        ctl.shutdown()


def test_stopping_one_variant_keeps_its_text_marked_stopped(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    ctl: ChatController = _started_controller(qtbot, tmp_path, llama_path)
    try:
        cid = _conversation(ctl, {**SAMPLED, "max_tokens": 200})
        _send_and_wait(qtbot, ctl, cid, "Hello there")
        first = ctl.store.active_path(cid)[-1]

        def stop_second(update: SiblingText) -> None:
            if update.index == 1:
                ctl.variants.stop(1)

        ctl.variants.replyUpdated.connect(stop_second)
        with qtbot.waitSignal(ctl.variants.ended, timeout=60000):
            assert ctl.regenerate_variants(first.id, 2)
        variants = ctl.store.siblings(first.id)[0][1:]
        assert variants[1].status == "stopped" and variants[1].content
        assert variants[1].stats["generated_tokens"] < 200
        assert variants[0].status == "complete" and variants[0].stats["generated_tokens"] == 200
    finally:
        ctl.shutdown()


def test_closing_mid_way_keeps_every_variant_marked_stopped(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    ctl: ChatController = _started_controller(qtbot, tmp_path, llama_path)
    cid = _conversation(ctl, {**SAMPLED, "max_tokens": 3000})
    _send_and_wait(qtbot, ctl, cid, "Hello there")
    first = ctl.store.active_path(cid)[-1]
    with qtbot.waitSignal(ctl.variants.replyUpdated, timeout=30000):
        assert ctl.regenerate_variants(first.id, 2)
    ids = ctl.variants.message_ids()
    ctl.shutdown()
    from app.store.conversations import Store

    store = Store.open(tmp_path / "chat.sqlite3")
    try:
        kept = [store.get_message(i) for i in ids]
        assert all(m.status == "stopped" and m.content for m in kept)
    finally:
        store.close()
