"""Compaction with the real SmolLM2 (issue 47): it writes a summary of a short chat, and the chat
goes on from it. A few dozen tokens in all."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.chat.controller import ChatController
from app.generation.worker import InferenceWorker
from app.settings import Preferences
from app.store.compaction_records import covered_ids, stands_for
from app.store.conversations import Store

GREEDY = {"temperature": 0.0, "max_tokens": 12, "seed": 0}
WAIT_MS = 120000


@pytest.mark.slow
def test_smollm2_summarises_a_chat_that_then_goes_on(
    qtbot, tmp_path: Path, smollm2_folder: Path
) -> None:
    worker = InferenceWorker()
    preferences = Preferences(tmp_path / "settings.ini")
    preferences.summaries = replace(preferences.summaries, keep_turns=1)
    ctl = ChatController(
        Store.open(tmp_path / "chat.sqlite3"), worker, preferences, lambda _p: smollm2_folder
    )
    try:
        with qtbot.waitSignal(worker.modelLoaded, timeout=WAIT_MS):
            ctl.start()
        cid = ctl.new_conversation()
        ctl.update_settings(cid, params=GREEDY)
        for text in ("I want to learn to bake bread at home.", "I have flour, salt and yeast."):
            with qtbot.waitSignal(worker.generationFinished, timeout=WAIT_MS):
                assert ctl.send(cid, text)
        full = ctl.store.active_path(cid)

        with qtbot.waitSignal(ctl.compaction.compacted, timeout=WAIT_MS):
            assert ctl.send(cid, "/compact")
        qtbot.waitUntil(lambda: not ctl.is_busy(), timeout=WAIT_MS)
        summary = ctl.store.active_path(cid)[0]
        assert summary.role == "summary" and summary.status == "complete"
        assert summary.content.strip() and summary.provenance["token_ids"]
        assert covered_ids(summary) == [m.id for m in full[:2]]
        assert summary.stats["cached_tokens"] >= full[1].stats["prompt_tokens"]
        tokens = stands_for(summary)
        assert tokens is not None and tokens > 10

        with qtbot.waitSignal(worker.generationFinished, timeout=WAIT_MS):
            assert ctl.send(cid, "What should I do first?")
        reply = ctl.store.active_path(cid)[-1]
        assert reply.role == "assistant" and reply.status == "complete" and reply.content.strip()
        assert reply.stats["summary_of_tokens"] == tokens
    finally:
        ctl.shutdown()
