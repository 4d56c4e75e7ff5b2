"""Compaction as a branch (issue 47), end to end on the real worker and the tiny llama: the
compacted branch's shape beside the full chat, the caches of both, *Summarise older turns*
acting by itself and proposing, and a summary stopped half-way."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from app.chat.controller import ChatController
from app.compaction.events import BranchCompacted, BranchComparison, SummaryProposal
from app.store.compaction_records import copy_of, covered_ids, kept_ids, stands_for
from tests.app.chat.test_controller import GREEDY, LONG, _send_and_wait, _started_controller

WAIT_MS = 30000


@pytest.fixture
def controller(qtbot, tmp_path: Path, llama_path: Path) -> Iterator[ChatController]:
    ctl = _started_controller(qtbot, tmp_path, llama_path)
    ctl.preferences.summaries = replace(ctl.preferences.summaries, keep_turns=1)
    yield ctl
    ctl.shutdown()


def _chat(qtbot, ctl: ChatController, turns: int, params: dict = GREEDY) -> int:
    cid = ctl.new_conversation()
    ctl.update_settings(cid, system_prompt="Be brief.", params=params)
    for n in range(turns):
        _send_and_wait(qtbot, ctl, cid, f"Question number {n + 1} about the weather")
    return cid


def _summarise(qtbot, ctl: ChatController, message_id: int) -> BranchCompacted:
    with qtbot.waitSignal(ctl.compaction.compacted, timeout=WAIT_MS) as done:
        assert ctl.compaction.summarise(message_id)
    qtbot.waitUntil(lambda: not ctl.is_busy(), timeout=WAIT_MS)
    return done.args[0]


def test_a_summary_makes_a_branch_beside_the_full_chat_which_keeps_its_cache(
    qtbot, controller: ChatController
) -> None:
    ctl, store = controller, controller.store
    cid = _chat(qtbot, ctl, 3)
    full = store.active_path(cid)
    made = _summarise(qtbot, ctl, full[-1].id)

    # The full chat is untouched; the compacted branch is a sibling of its first message.
    assert [(m.id, m.content) for m in store.path_to(full[-1].id)] == [
        (m.id, m.content) for m in full
    ]
    branch = store.active_path(cid)
    summary = branch[0]
    assert store.siblings(summary.id)[0][0].id == full[0].id
    assert store.siblings(summary.id)[1] == 1  # ‹ 2/2 ›
    assert summary.role == "summary" and summary.status == "complete" and summary.content
    assert covered_ids(summary) == [m.id for m in full[:4]]
    assert kept_ids(summary) == [m.id for m in full[4:]]
    assert [copy_of(m) for m in branch[1:]] == [m.id for m in full[4:]]
    assert [m.content for m in branch[1:]] == [m.content for m in full[4:]]
    assert (made.summary_id, made.leaf_id, made.covered, made.kept) == (
        summary.id,
        branch[-1].id,
        4,
        2,
    )
    # Written as a reply of the covered path is: its prefix came from the cache, and it has
    # stats and provenance like any reply.
    assert summary.stats["generated_tokens"] == GREEDY["max_tokens"]
    assert summary.stats["cached_tokens"] >= full[3].stats["prompt_tokens"]
    assert summary.provenance["token_ids"]
    tokens = stands_for(summary)
    assert tokens is not None and 0 < tokens < full[3].stats["prompt_tokens"] + 6
    with qtbot.waitSignal(ctl.replays.finished, timeout=WAIT_MS) as replayed:
        assert ctl.replays.start(summary.id)
    assert replayed.args[0].identical and not replayed.args[0].changed

    # A reply on the compacted branch says what the summary stands for.
    _send_and_wait(qtbot, ctl, cid, "And tomorrow?")
    on_branch = store.active_path(cid)[-1]
    assert on_branch.stats["summary_of_tokens"] == tokens
    assert on_branch.stats["summary_id"] == summary.id

    # Back to the full chat: its whole prompt is still cached, nothing is read again.
    ctl.switch_sibling(summary.id, -1)
    assert store.active_path(cid)[-1].id == full[-1].id
    _send_and_wait(qtbot, ctl, cid, "And tomorrow?")
    follow_up = store.active_path(cid)[-1]
    assert "summary_of_tokens" not in follow_up.stats
    assert follow_up.stats["cached_tokens"] >= full[-1].stats["prompt_tokens"]

    # The same question, with and without the summary, side by side: already answered on both.
    with qtbot.waitSignal(ctl.compaction.compared, timeout=WAIT_MS) as compared:
        assert ctl.compaction.compare_with_full_chat(on_branch.id)
    assert compared.args[0] == BranchComparison(cid, on_branch.id, follow_up.id)

    # A summary of the compacted branch: it covers the first summary, and stands for what it
    # stood for and more.
    ctl.switch_to_message(on_branch.id)
    again = _summarise(qtbot, ctl, on_branch.id)
    second = store.get_message(again.summary_id)
    assert covered_ids(second)[0] == summary.id
    assert (stands_for(second) or 0) > tokens
    assert len(store.siblings(second.id)[0]) == 3


def test_a_question_after_the_summary_is_asked_of_the_full_chat_too(
    qtbot, controller: ChatController
) -> None:
    ctl, store = controller, controller.store
    cid = _chat(qtbot, ctl, 2)
    full = store.active_path(cid)
    _summarise(qtbot, ctl, full[-1].id)
    _send_and_wait(qtbot, ctl, cid, "What about snow?")
    with_summary = store.active_path(cid)[-1]
    with qtbot.waitSignal(ctl.compaction.compared, timeout=WAIT_MS) as compared:
        assert ctl.compaction.compare_with_full_chat(with_summary.id)
    comparison: BranchComparison = compared.args[0]
    answer = store.get_message(comparison.full_chat)
    asked = store.path_to(answer.id)
    # The full chat, then the question copied below its end; its prefix was cached.
    assert [m.id for m in asked[: len(full)]] == [m.id for m in full]
    assert copy_of(asked[-2]) == with_summary.parent_id
    assert answer.stats["cached_tokens"] >= full[-1].stats["prompt_tokens"]
    assert store.active_path(cid)[-1].id == with_summary.id  # the person stays where they were
    # Asked again: the same answer, nothing new written.
    count = len(store.all_messages(cid))
    with qtbot.waitSignal(ctl.compaction.compared, timeout=WAIT_MS) as again:
        assert ctl.compaction.compare_with_full_chat(with_summary.id)
    assert again.args[0] == comparison and len(store.all_messages(cid)) == count


def test_summarise_older_turns_acts_before_the_reply_and_keeps_the_message(
    qtbot, controller: ChatController
) -> None:
    ctl, store = controller, controller.store
    summaries = ctl.preferences.summaries
    ctl.preferences.summaries = replace(summaries, threshold=0.5, automatic=True)
    params = {**GREEDY, "overflow": "summarise", "context_length": 256}
    cid = _chat(qtbot, ctl, 0, params)
    notices: list[str] = []
    ctl.notice.connect(notices.append)
    while not store.active_path(cid) or store.active_path(cid)[0].role != "summary":
        assert len(store.active_path(cid)) < 40, "the threshold is never reached"
        _send_and_wait(qtbot, ctl, cid, "Tell me about the weather in Lisbon today")
    qtbot.waitUntil(lambda: not ctl.is_busy(), timeout=WAIT_MS)
    branch = store.active_path(cid)
    summary, asked, reply = branch[0], branch[-2], branch[-1]
    # The message that met the threshold is kept word for word and answered on the new branch.
    original = store.get_message(copy_of(asked) or -1)
    assert original.role == "user" and original.content == asked.content
    assert store.children(original.id) == []  # never answered twice
    assert reply.role == "assistant" and reply.stats["summary_of_tokens"] == stands_for(summary)
    assert any("older turns are being summarised" in n for n in notices)

    # Proposed instead: the notice comes when a reply ends at the threshold.
    ctl.preferences.summaries = replace(ctl.preferences.summaries, automatic=False)
    proposals: list[SummaryProposal] = []
    ctl.compaction.proposed.connect(proposals.append)
    for _ in range(20):
        _send_and_wait(qtbot, ctl, cid, "Tell me about the weather in Lisbon today")
        if proposals:
            break
    last = store.active_path(cid)[-1]
    assert proposals == [
        SummaryProposal(cid, last.stats["prompt_tokens"] + last.stats["generated_tokens"], 256)
    ]
    assert proposals[0].used >= 128 and store.active_path(cid)[0].id == summary.id


def test_a_summary_stopped_half_way_leaves_the_chat_as_it_was(
    qtbot, controller: ChatController
) -> None:
    ctl, store = controller, controller.store
    cid = _chat(qtbot, ctl, 2)
    full = store.active_path(cid)
    ctl.update_settings(cid, params=LONG)
    notices: list[str] = []
    ctl.notice.connect(notices.append)
    with qtbot.waitSignal(ctl.streamUpdated, timeout=WAIT_MS):
        assert ctl.send(cid, "/compact")
    assert ctl.is_busy() and store.active_path(cid)[0].role == "summary"
    ctl.stop()
    qtbot.waitUntil(lambda: not ctl.is_busy(), timeout=WAIT_MS)
    assert [m.id for m in store.active_path(cid)] == [m.id for m in full]
    assert [m.role for m in store.all_messages(cid)] == [m.role for m in full]
    assert notices[-1] == "Summarising was stopped: the chat is as it was."
